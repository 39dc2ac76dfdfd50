//! `cairn bench webhdfs`: WebHDFS data throughput, one file written
//! (CREATE) and read back (OPEN) through any WebHDFS server, Cairn's or
//! Apache HDFS's, the way an HTTP client sees it: the request to the
//! NameNode, its 307, and the data request to the DataNode it names, all
//! in the timed interval.
//!
//! The client is hyper's HTTP/1.1 connection API on tokio: a fresh
//! connection per request (as curl and Java's WebHdfsFileSystem do for the
//! redirect), request bodies streamed in 1 MiB chunks with a
//! Content-Length, response bodies consumed as they arrive. The data is
//! `bench dfsio`'s (1 MiB pseudo-random chunks, each from its own offset
//! of a 2 MiB pattern) and every byte read is compared with it.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};
use bytes::Bytes;
use clap::Args;
use http_body_util::{BodyExt, Empty, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;

use super::dfsio::Content;
use super::{machine_facts, mib_per_s, parse_size, report, Json, Obj};

#[derive(Args, Debug)]
pub struct WebhdfsArgs {
    /// The NameNode's HTTP address: http://HOST:PORT.
    #[arg(long, value_name = "URL")]
    pub url: String,
    /// Bytes in the file (suffixes k, m, g: binary multiples).
    #[arg(long, default_value = "1g", value_parser = parse_size, value_name = "BYTES")]
    pub size: u64,
    /// Repetitions of each phase (the report gives each run and the median).
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub runs: usize,
    /// Phases, comma-separated: write, read (a read run needs a write first).
    #[arg(long, default_value = "write,read", value_name = "LIST")]
    pub ops: String,
    /// The file written and read.
    #[arg(long, default_value = "/benchmarks/webhdfs/data", value_name = "PATH")]
    pub path: String,
    /// `user.name` of the requests (default: $HADOOP_USER_NAME, else the
    /// OS user).
    #[arg(long, value_name = "USER")]
    pub user: Option<String>,
    /// `replication` of CREATE (default: the server's).
    #[arg(long, value_name = "R")]
    pub replication: Option<u32>,
    /// `blocksize` of CREATE (default: the server's).
    #[arg(long, value_parser = parse_size, value_name = "BYTES")]
    pub block_size: Option<u64>,
    /// Keep the file afterwards (deleted by default).
    #[arg(long)]
    pub keep: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Longest wait for a response's head.
const HEAD_TIMEOUT: Duration = Duration::from_secs(120);

/// `http://host:port/path?query` split into the address and the rest.
fn split_url(url: &str) -> anyhow::Result<(String, String)> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| anyhow!("{url}: only http:// URLs are supported"))?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    Ok((authority.to_string(), path.to_string()))
}

/// One request on a fresh connection; the response head (body unread).
async fn send<B>(authority: &str, request: Request<B>) -> anyhow::Result<Response<Incoming>>
where
    B: hyper::body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let addr: SocketAddr = tokio::net::lookup_host(authority)
        .await
        .with_context(|| format!("resolving {authority}"))?
        .next()
        .ok_or_else(|| anyhow!("{authority} does not resolve"))?;
    let stream = tokio::net::TcpStream::connect(addr)
        .await
        .with_context(|| format!("connecting to {addr}"))?;
    let _ = stream.set_nodelay(true);
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(conn);
    tokio::time::timeout(HEAD_TIMEOUT, sender.send_request(request))
        .await
        .map_err(|_| anyhow!("no answer from {authority} in {HEAD_TIMEOUT:?}"))?
        .map_err(Into::into)
}

fn request<B>(method: &str, authority: &str, path: &str, body: B) -> anyhow::Result<Request<B>> {
    Ok(Request::builder()
        .method(method)
        .uri(path)
        .header(hyper::header::HOST, authority)
        .body(body)?)
}

/// The body as text, for an error message.
async fn body_text(response: Response<Incoming>) -> String {
    match response.into_body().collect().await {
        Ok(b) => String::from_utf8_lossy(&b.to_bytes()).into_owned(),
        Err(e) => format!("(body unreadable: {e})"),
    }
}

/// Step 1: the NameNode's 307 and the DataNode URL it names.
async fn redirect(nn: &str, method: &str, path: &str) -> anyhow::Result<(String, String)> {
    let response = send(nn, request(method, nn, path, Empty::<Bytes>::new())?).await?;
    if response.status() != StatusCode::TEMPORARY_REDIRECT {
        let status = response.status();
        bail!("{method} {path}: {status}: {}", body_text(response).await);
    }
    let location = response
        .headers()
        .get(hyper::header::LOCATION)
        .and_then(|v| v.to_str().ok())
        .ok_or_else(|| anyhow!("{method} {path}: 307 without a Location"))?
        .to_string();
    split_url(&location)
}

struct Target<'a> {
    nn: String,
    base: String,
    user: String,
    args: &'a WebhdfsArgs,
}

impl Target<'_> {
    fn path(&self, op: &str, extra: &str) -> String {
        format!(
            "{}{}?op={op}&user.name={}{extra}",
            self.base, self.args.path, self.user
        )
    }

    async fn write(&self, content: &Arc<Content>) -> anyhow::Result<Duration> {
        let mut extra = "&overwrite=true".to_string();
        if let Some(r) = self.args.replication {
            extra.push_str(&format!("&replication={r}"));
        }
        if let Some(b) = self.args.block_size {
            extra.push_str(&format!("&blocksize={b}"));
        }
        let size = self.args.size;
        let start = Instant::now();
        let (dn, dn_path) = redirect(&self.nn, "PUT", &self.path("CREATE", &extra)).await?;
        let content = Arc::clone(content);
        let chunks = futures::stream::iter((0..Content::chunks(size)).map(move |k| {
            Ok::<_, std::convert::Infallible>(Frame::data(content.chunk(0, k, size)))
        }));
        // Chunks are made as hyper asks for them: the body is never whole.
        let body = StreamBody::new(chunks);
        let req = Request::builder()
            .method("PUT")
            .uri(&dn_path)
            .header(hyper::header::HOST, &dn)
            .header(hyper::header::CONTENT_LENGTH, size)
            .header(hyper::header::CONTENT_TYPE, "application/octet-stream")
            .body(body)?;
        let response = send(&dn, req).await?;
        let status = response.status();
        if status != StatusCode::CREATED {
            bail!("CREATE on {dn}: {status}: {}", body_text(response).await);
        }
        body_text(response).await;
        Ok(start.elapsed())
    }

    async fn read(&self, content: &Content) -> anyhow::Result<Duration> {
        let start = Instant::now();
        let (dn, dn_path) = redirect(&self.nn, "GET", &self.path("OPEN", "")).await?;
        let response = send(&dn, request("GET", &dn, &dn_path, Empty::<Bytes>::new())?).await?;
        let status = response.status();
        if status != StatusCode::OK {
            bail!("OPEN on {dn}: {status}: {}", body_text(response).await);
        }
        let mut body = response.into_body();
        let mut offset = 0u64;
        while let Some(frame) = body.frame().await {
            let frame = frame.with_context(|| format!("reading at offset {offset}"))?;
            if let Ok(data) = frame.into_data() {
                if !content.matches(0, offset, &data) {
                    bail!("OPEN: the data at offset {offset} is not what was written");
                }
                offset += data.len() as u64;
            }
        }
        if offset != self.args.size {
            bail!("OPEN: {offset} bytes read, {} written", self.args.size);
        }
        Ok(start.elapsed())
    }

    async fn delete(&self) -> anyhow::Result<()> {
        let path = self.path("DELETE", "");
        let response = send(
            &self.nn,
            request("DELETE", &self.nn, &path, Empty::<Bytes>::new())?,
        )
        .await?;
        if response.status() != StatusCode::OK {
            let status = response.status();
            bail!("DELETE: {status}: {}", body_text(response).await);
        }
        Ok(())
    }
}

/// Runs the benchmark.
///
/// # Errors
/// When a request fails or the data read back is not what was written.
pub async fn run(a: &WebhdfsArgs) -> anyhow::Result<Json> {
    if a.runs == 0 {
        bail!("--runs must be at least 1");
    }
    let (nn, base_path) = split_url(&a.url)?;
    let base = match base_path.trim_end_matches('/') {
        "" => "/webhdfs/v1".to_string(),
        p => p.to_string(),
    };
    if !a.path.starts_with('/') {
        bail!("--path must be absolute");
    }
    let ops: Vec<&str> = a
        .ops
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    if let Some(bad) = ops.iter().find(|o| !["write", "read"].contains(o)) {
        bail!("--ops: unknown phase {bad:?} (write, read)");
    }
    let user = a.user.clone().unwrap_or_else(super::dfsio::user);
    let target = Target {
        nn,
        base,
        user,
        args: a,
    };
    let content = Arc::new(Content::new());
    let mut results = Obj::new();
    for op in &ops {
        let mut rows = Vec::new();
        let mut rates = Vec::new();
        for run in 1..=a.runs {
            let elapsed = match *op {
                "write" => target.write(&content).await,
                _ => target.read(&content).await,
            }
            .with_context(|| format!("{op} run {run}"))?;
            let rate = mib_per_s(a.size, elapsed);
            rates.push(rate);
            rows.push(Json::from(
                Obj::new()
                    .with("run", run)
                    .with("bytes", a.size)
                    .with("elapsed_s", elapsed.as_secs_f64())
                    .with("mib_per_s", rate),
            ));
        }
        rates.sort_by(f64::total_cmp);
        let median = rates[rates.len() / 2];
        results.put(
            op,
            Obj::new()
                .with("median_mib_per_s", median)
                .with("min_mib_per_s", rates[0])
                .with("max_mib_per_s", rates[rates.len() - 1])
                .with("runs", Json::from(rows)),
        );
    }
    if !a.keep && ops.contains(&"write") {
        target.delete().await.context("deleting the file")?;
    }
    let parameters = Obj::new()
        .with("url", a.url.as_str())
        .with("path", a.path.as_str())
        .with("user", target.user.as_str())
        .with("bytes", a.size)
        .with("runs", a.runs)
        .with("replication", a.replication.map(u64::from))
        .with("block_size", a.block_size);
    Ok(report(
        "webhdfs",
        "One file written with CREATE (overwrite=true) and read with OPEN through WebHDFS, each \
         phase --runs times in a row. Timed per run: the request to the NameNode, its 307, and \
         the data request to the DataNode it names, until the DataNode's answer (201 after the \
         whole body for CREATE; the last byte for OPEN). Client: hyper 1 HTTP/1.1, one \
         connection per request, bodies streamed in 1 MiB chunks; every byte read is compared \
         with what was written. MiB/s = bytes / 2^20 / elapsed; the median is of the runs.",
        machine_facts(None),
        parameters,
        results.into(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_split_into_authority_and_path() {
        let (a, p) = split_url("http://h:1/webhdfs/v1/x?op=OPEN").expect("url");
        assert_eq!((a.as_str(), p.as_str()), ("h:1", "/webhdfs/v1/x?op=OPEN"));
        assert!(split_url("https://h:1/").is_err());
    }
}
