//! A connection's handshake: the preamble (IPC version and auth), SIMPLE
//! SASL, and the connection context that names the user (and the real
//! user acting for it, checked against the proxy-user rules).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use bytes::Bytes;
use cairn_proto::exceptions;
use cairn_proto::hadoop::common::{
    rpc_response_header_proto::RpcErrorCodeProto,
    rpc_sasl_proto::{SaslAuth, SaslState},
    IpcConnectionContextProto, RpcSaslProto,
};
use prost::Message;
use tokio::io::AsyncReadExt;

use super::{Close, Connection};
use crate::frame;

impl Connection {
    /// Reads the 7-byte preamble and returns the auth byte.
    pub(super) async fn read_preamble(&mut self) -> Result<u8, Close> {
        let timeout = self.shared.config.idle_timeout;
        let mut magic = [0u8; 4];
        match tokio::time::timeout(timeout, self.reader.read_exact(&mut magic)).await {
            Err(_) => return Err("no preamble within the idle timeout".into()),
            Ok(Err(e)) => return Err(format!("reading preamble: {e}")),
            Ok(Ok(_)) => {}
        }
        if frame::is_http_get(&magic) {
            // An HTTP client on the IPC port: tell it so, as Hadoop does.
            let text = "HTTP/1.1 404 Not Found\r\nContent-type: text/plain\r\n\r\n\
                It looks like you are making an HTTP request to a Hadoop IPC port. \
                This is not the port of the web interface of this daemon.\r\n";
            self.send(Bytes::from_static(text.as_bytes())).await?;
            return Err("HTTP request on the IPC port".into());
        }
        let mut rest = [0u8; 3];
        match tokio::time::timeout(timeout, self.reader.read_exact(&mut rest)).await {
            Err(_) => return Err("incomplete preamble within the idle timeout".into()),
            Ok(Err(e)) => return Err(format!("reading preamble: {e}")),
            Ok(Ok(_)) => {}
        }
        let [m0, m1, m2, m3] = magic;
        let [version, service_class, auth] = rest;
        let auth = match frame::parse_preamble(&[m0, m1, m2, m3, version, service_class, auth]) {
            Ok(auth) => auth,
            Err(frame::PreambleError::OldVersion(version)) => {
                let msg = version_mismatch(version);
                // Pre-protobuf clients read a bare (callId, status, class, message).
                let mut old = Vec::new();
                old.extend_from_slice(&(-1i32).to_be_bytes());
                old.extend_from_slice(&(-1i32).to_be_bytes());
                for s in [exceptions::RPC_VERSION_MISMATCH, msg.as_str()] {
                    old.extend_from_slice(&(s.len() as u32).to_be_bytes());
                    old.extend_from_slice(s.as_bytes());
                }
                self.send(Bytes::from(old)).await?;
                return Err(msg);
            }
            Err(frame::PreambleError::Version(version)) => {
                return Err(self
                    .fatal(
                        frame::CALL_ID_NONE,
                        exceptions::RPC_VERSION_MISMATCH,
                        &version_mismatch(version),
                        RpcErrorCodeProto::FatalVersionMismatch,
                        &Bytes::new(),
                        -1,
                    )
                    .await);
            }
            Err(frame::PreambleError::Auth(auth)) => {
                return Err(self
                    .fatal(
                        frame::CALL_ID_NONE,
                        "org.apache.hadoop.ipc.IpcException",
                        &format!("Unknown auth protocol:{}", auth as i8),
                        RpcErrorCodeProto::FatalUnauthorized,
                        &Bytes::new(),
                        -1,
                    )
                    .await);
            }
        };
        Ok(auth)
    }

    /// Handles one SASL frame; returns whether negotiation is still pending.
    pub(super) async fn sasl(&mut self, mut body: Bytes) -> Result<bool, Close> {
        let msg: RpcSaslProto = match frame::take_delimited(&mut body) {
            Ok(m) => m,
            Err(e) => return Err(self.sasl_refused(format!("bad SASL message: {e}")).await),
        };
        match SaslState::try_from(msg.state) {
            Ok(SaslState::Negotiate) => {
                // We offer only SIMPLE; the client answers INITIATE(SIMPLE)
                // and then, without waiting, its context and first call.
                let reply = RpcSaslProto {
                    state: SaslState::Negotiate as i32,
                    auths: vec![SaslAuth {
                        method: "SIMPLE".into(),
                        mechanism: String::new(),
                        ..Default::default()
                    }],
                    ..Default::default()
                };
                let payload = reply.encode_to_vec();
                let h = frame::success_header(frame::CALL_ID_SASL, &Bytes::new(), -1);
                self.send(frame::response_frame(&h, Some(&payload))).await?;
                Ok(true)
            }
            Ok(SaslState::Initiate) if msg.auths.first().is_some_and(|a| a.method == "SIMPLE") => {
                Ok(false)
            }
            _ => Err(self
                .sasl_refused("only SIMPLE authentication is supported".into())
                .await),
        }
    }

    async fn sasl_refused(&self, msg: String) -> Close {
        self.fatal(
            frame::CALL_ID_SASL,
            exceptions::RPC_SERVER_EXCEPTION,
            &msg,
            RpcErrorCodeProto::FatalUnauthorized,
            &Bytes::new(),
            -1,
        )
        .await
    }

    pub(super) async fn connection_context(
        &mut self,
        header: &frame::CallHeader,
        mut body: Bytes,
    ) -> Result<(), Close> {
        let ctx: IpcConnectionContextProto = match frame::take_delimited(&mut body) {
            Ok(c) => c,
            Err(e) => {
                return Err(self
                    .fatal(
                        header.call_id,
                        exceptions::RPC_SERVER_EXCEPTION,
                        &format!("cannot read the connection context: {e}"),
                        RpcErrorCodeProto::FatalDeserializingRequest,
                        &Bytes::new(),
                        -1,
                    )
                    .await)
            }
        };
        let user = ctx
            .user_info
            .as_ref()
            .and_then(|u| u.effective_user.clone())
            .filter(|u| !u.is_empty());
        let Some(user) = user else {
            return Err(self
                .fatal(
                    header.call_id,
                    exceptions::ACCESS_CONTROL,
                    "Connection context names no user",
                    RpcErrorCodeProto::FatalUnauthorized,
                    &Bytes::new(),
                    -1,
                )
                .await);
        };
        let real_user = ctx
            .user_info
            .and_then(|u| u.real_user)
            .filter(|u| !u.is_empty());
        if let (Some(real), Some(check)) = (&real_user, &self.shared.config.proxy_check) {
            if let Err(why) = check.allow(real, &user, self.addr.ip()) {
                tracing::info!(%real, %user, "connection refused: {why}");
                let failures = &self.shared.config.metrics.authorization_failures;
                failures.fetch_add(1, Ordering::Relaxed);
                return Err(self
                    .fatal(
                        header.call_id,
                        exceptions::AUTHORIZATION,
                        &why,
                        RpcErrorCodeProto::FatalUnauthorized,
                        &Bytes::new(),
                        -1,
                    )
                    .await);
            }
        }
        self.real_user = real_user.map(Arc::from);
        self.counted = Some(self.shared.config.metrics.user_connected(&user));
        self.user = Some(Arc::from(user));
        let authorized = &self.shared.config.metrics.authorizations;
        authorized.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

/// The FATAL message for a preamble with another IPC version.
fn version_mismatch(version: u8) -> String {
    format!(
        "Server IPC version {} cannot communicate with client version {version}",
        frame::IPC_VERSION
    )
}
