//! Who may act for whom on a connection: a connection context that names a
//! real user besides the effective one (`doAs`: a service such as Hive or
//! Oozie acting for its users) is allowed only if the server's check says
//! so, as Hadoop's `Server.authorizeConnection` asks `ProxyUsers.authorize`.
//! A refusal is a FATAL_UNAUTHORIZED reply with `AuthorizationException`,
//! and the connection closes.

use std::fmt;
use std::net::IpAddr;
use std::sync::Arc;

type Check = dyn Fn(&str, &str, IpAddr) -> Result<(), String> + Send + Sync;

/// Decides whether `real` may act as `user` from an address.
#[derive(Clone)]
pub struct ProxyCheck(Arc<Check>);

impl ProxyCheck {
    /// `f(real, user, addr)`: `Err(message)` refuses.
    pub fn new(
        f: impl Fn(&str, &str, IpAddr) -> Result<(), String> + Send + Sync + 'static,
    ) -> Self {
        Self(Arc::new(f))
    }

    /// Whether `real` may act as `user` from `addr`.
    ///
    /// # Errors
    /// The refusal's message.
    pub fn allow(&self, real: &str, user: &str, addr: IpAddr) -> Result<(), String> {
        (self.0)(real, user, addr)
    }
}

impl fmt::Debug for ProxyCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ProxyCheck")
    }
}
