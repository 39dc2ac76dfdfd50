//! What the NameNode's and the DataNodes' WebHDFS handlers share: HDFS's
//! `RemoteException` answers with the status code its `ExceptionHandler`
//! picks for the Java class, and the query parameters with HDFS's parsing
//! rules and messages (`org.apache.hadoop.hdfs.web.resources.*Param`).

use std::collections::HashMap;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

/// Java classes the handlers name themselves.
pub const ILLEGAL_ARGUMENT: &str = "java.lang.IllegalArgumentException";
pub const HADOOP_ILLEGAL_ARGUMENT: &str = "org.apache.hadoop.HadoopIllegalArgumentException";
pub const UNSUPPORTED_OPERATION: &str = "java.lang.UnsupportedOperationException";
pub const FILE_NOT_FOUND: &str = "java.io.FileNotFoundException";
pub const IO: &str = "java.io.IOException";
pub const SECURITY: &str = "java.lang.SecurityException";
pub const AUTHORIZATION: &str = "org.apache.hadoop.security.authorize.AuthorizationException";
pub const INVALID_PATH: &str = "org.apache.hadoop.fs.InvalidPathException";

/// A failed WebHDFS request: the status code and HDFS's RemoteException.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteError {
    pub status: StatusCode,
    /// The Java exception class (fully qualified).
    pub class: String,
    pub message: String,
}

impl RemoteError {
    /// HDFS's `ExceptionHandler`: security → 403, FileNotFound → 404, any
    /// other IOException → 403, bad arguments and unsupported operations →
    /// 400, other runtime exceptions → 500.
    pub fn new(class: impl Into<String>, message: impl Into<String>) -> RemoteError {
        let class = class.into();
        let status = match class.as_str() {
            FILE_NOT_FOUND => StatusCode::NOT_FOUND,
            ILLEGAL_ARGUMENT | HADOOP_ILLEGAL_ARGUMENT | INVALID_PATH | UNSUPPORTED_OPERATION => {
                StatusCode::BAD_REQUEST
            }
            SECURITY | AUTHORIZATION => StatusCode::FORBIDDEN,
            c if c.starts_with("java.lang.") => StatusCode::INTERNAL_SERVER_ERROR,
            _ => StatusCode::FORBIDDEN,
        };
        RemoteError {
            status,
            class,
            message: message.into(),
        }
    }

    pub fn illegal_argument(message: impl Into<String>) -> RemoteError {
        RemoteError::new(ILLEGAL_ARGUMENT, message)
    }

    pub fn io(message: impl Into<String>) -> RemoteError {
        RemoteError::new(IO, message)
    }

    /// A parameter whose value HDFS's parser refuses.
    pub fn invalid_param(name: &str, cause: impl std::fmt::Display) -> RemoteError {
        RemoteError::illegal_argument(format!(
            "Invalid value for webhdfs parameter \"{name}\": {cause}"
        ))
    }

    /// A parameter the operation needs and the request lacks.
    pub fn required(name: &str, op: &str) -> RemoteError {
        RemoteError::illegal_argument(format!(
            "Required param {name} for op: {op} is null or empty"
        ))
    }

    /// The JSON body: `{"RemoteException": {...}}`.
    pub fn to_json(&self) -> serde_json::Value {
        // Java's getSimpleName: a nested class (`FSLimitException$
        // PathComponentTooLongException`) goes by its own name.
        let simple = self.class.rsplit(['.', '$']).next().unwrap_or(&self.class);
        serde_json::json!({
            "RemoteException": {
                "exception": simple,
                "javaClassName": self.class,
                "message": self.message,
            }
        })
    }
}

impl std::fmt::Display for RemoteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.class, self.message)
    }
}

impl IntoResponse for RemoteError {
    fn into_response(self) -> Response {
        json_response(self.status, &self.to_json())
    }
}

/// A JSON answer as HDFS writes it (`application/json`, no pretty print).
pub fn json_response(status: StatusCode, body: &serde_json::Value) -> Response {
    text_response(status, "application/json", body.to_string())
}

/// A body of `content_type` with `status`.
pub fn text_response(status: StatusCode, content_type: &'static str, body: String) -> Response {
    (
        status,
        [(axum::http::header::CONTENT_TYPE, content_type)],
        body,
    )
        .into_response()
}

/// An empty 200 answer, as HDFS gives for operations that return nothing.
pub fn ok_empty() -> Response {
    text_response(StatusCode::OK, "application/octet-stream", String::new())
}

/// The path under `/webhdfs/v1`, percent-decoded (`/` when empty).
///
/// # Errors
/// Escapes that do not make UTF-8.
pub fn request_path(uri_path: &str) -> Result<String, RemoteError> {
    let raw = uri_path.strip_prefix("/webhdfs/v1").unwrap_or(uri_path);
    let mut path = percent_decode(raw)
        .ok_or_else(|| RemoteError::illegal_argument(format!("Invalid path: {raw}")))?;
    if path.is_empty() {
        return Ok("/".to_string());
    }
    // HDFS's HTTP server maps a path whose `.` and `..` segments lead back
    // to the root onto the servlet's root, and the path HDFS then sees ends
    // in '/' (`/a/..` is `/a/../` in its messages).
    if !path.ends_with('/') && dots_lead_to_root(&path) {
        path.push('/');
    }
    Ok(path)
}

/// Whether `path` has `.` or `..` segments and, with them resolved, names
/// the root (never passing above it).
fn dots_lead_to_root(path: &str) -> bool {
    let mut depth = 0usize;
    let mut dots = false;
    for segment in path.split('/') {
        match segment {
            "" => {}
            "." => dots = true,
            ".." => {
                dots = true;
                let Some(up) = depth.checked_sub(1) else {
                    return false;
                };
                depth = up;
            }
            _ => depth += 1,
        }
    }
    dots && depth == 0
}

/// Decodes `%XX` escapes; `None` when they do not make UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// What a WebHDFS `createflag` asks of a create (see [`Params::create_flags`]).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct CreateFlags {
    /// Replace an existing file.
    pub overwrite: bool,
    /// Append to an existing file instead of failing (created otherwise).
    pub append: bool,
}

/// Query parameters by lower-cased name, as HDFS's `ParamFilter` sees
/// them; the first of repeated names wins (JAX-RS's `@QueryParam`), all
/// are kept for the repeatable ones (`xattr.name`).
#[derive(Debug, Default, Clone)]
pub struct Params {
    values: HashMap<String, Vec<String>>,
}

impl Params {
    pub fn parse(query: Option<&str>) -> Params {
        let mut values: HashMap<String, Vec<String>> = HashMap::new();
        let query = query.unwrap_or("").as_bytes();
        for (k, v) in form_urlencoded::parse(query) {
            values
                .entry(k.to_ascii_lowercase())
                .or_default()
                .push(v.into_owned());
        }
        Params { values }
    }

    /// The value of `name`; `None` when absent or HDFS's `null`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.values
            .get(name)
            .and_then(|v| v.first())
            .map(String::as_str)
            .filter(|v| *v != "null")
    }

    /// A string parameter: absent, `null` and empty are all "not given".
    pub fn string(&self, name: &str) -> Option<&str> {
        self.get(name).filter(|v| !v.is_empty())
    }

    /// Every value of a repeatable parameter.
    pub fn all(&self, name: &str) -> Vec<&str> {
        self.values
            .get(name)
            .map(|v| v.iter().map(String::as_str).collect())
            .unwrap_or_default()
    }

    /// A `BooleanParam`.
    ///
    /// # Errors
    /// A value other than true/false (any case).
    pub fn boolean(&self, name: &str, default: bool) -> Result<bool, RemoteError> {
        match self.get(name) {
            None => Ok(default),
            Some(v) if v.eq_ignore_ascii_case("true") => Ok(true),
            Some(v) if v.eq_ignore_ascii_case("false") => Ok(false),
            Some(v) => Err(RemoteError::invalid_param(
                name,
                format!("Failed to parse \"{v}\" to Boolean."),
            )),
        }
    }

    /// `createflag` (HDFS's `CreateFlagParam`): comma-separated
    /// `CreateFlag` names in any case; absent or empty is none. Only
    /// OVERWRITE and APPEND change what a create does here; the others
    /// (CREATE and the placement and sync hints) are accepted.
    ///
    /// # Errors
    /// A name that is not a `CreateFlag`.
    pub fn create_flags(&self) -> Result<CreateFlags, RemoteError> {
        let mut flags = CreateFlags::default();
        let text = self.string("createflag").unwrap_or("");
        for name in text.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            match name.to_ascii_uppercase().as_str() {
                "OVERWRITE" => flags.overwrite = true,
                "APPEND" => flags.append = true,
                "CREATE"
                | "SYNC_BLOCK"
                | "LAZY_PERSIST"
                | "NEW_BLOCK"
                | "NO_LOCAL_WRITE"
                | "SHOULD_REPLICATE"
                | "IGNORE_CLIENT_LOCALITY"
                | "NO_LOCAL_RACK" => {}
                other => {
                    return Err(RemoteError::invalid_param(
                        "createflag",
                        format!("No enum constant org.apache.hadoop.fs.CreateFlag.{other}"),
                    ))
                }
            }
        }
        Ok(flags)
    }

    /// A `LongParam` (radix 10) of at least `min`.
    ///
    /// # Errors
    /// Not a number, or out of range.
    pub fn long(&self, name: &str, min: i64) -> Result<Option<i64>, RemoteError> {
        self.number(name, Radix::Long10, min, i64::MAX)
    }

    /// An `IntegerParam` (radix 10) of at least `min`.
    ///
    /// # Errors
    /// Not a number, or out of range.
    pub fn int(&self, name: &str, min: i64) -> Result<Option<i64>, RemoteError> {
        self.number(name, Radix::Int10, min, i64::from(i32::MAX))
    }

    /// A `ShortParam` in radix 10 (replication) of at least `min`.
    ///
    /// # Errors
    /// Not a number, or out of range.
    pub fn short(&self, name: &str, min: i64) -> Result<Option<i64>, RemoteError> {
        self.number(name, Radix::Short10, min, i64::from(i16::MAX))
    }

    /// A permission: a radix-8 short from 0 to 1777.
    ///
    /// # Errors
    /// Not octal, or above 1777.
    pub fn permission(&self, name: &str) -> Result<Option<u32>, RemoteError> {
        Ok(self
            .number(name, Radix::Short8, 0, 0o1777)?
            .and_then(|p| u32::try_from(p).ok()))
    }

    fn number(
        &self,
        name: &str,
        radix: Radix,
        min: i64,
        max: i64,
    ) -> Result<Option<i64>, RemoteError> {
        let Some(text) = self.get(name) else {
            return Ok(None);
        };
        let (base, kind, bits) = match radix {
            Radix::Long10 => (10, "long integer", 64),
            Radix::Int10 => (10, "integer", 32),
            Radix::Short10 => (10, "short integer", 16),
            Radix::Short8 => (8, "short integer", 16),
        };
        let parsed = i64::from_str_radix(text, base)
            .ok()
            .filter(|v| bits == 64 || (v.unsigned_abs() >> (bits - 1)) == 0);
        let Some(value) = parsed else {
            return Err(RemoteError::invalid_param(
                name,
                format!("Failed to parse \"{text}\" as a radix-{base} {kind}."),
            ));
        };
        let show = |v: i64| {
            if base == 8 {
                format!("{v:o}")
            } else {
                v.to_string()
            }
        };
        if value < min {
            return Err(RemoteError::invalid_param(
                name,
                format!(
                    "Invalid parameter range: {name} = {} < {}",
                    show(value),
                    show(min)
                ),
            ));
        }
        if value > max {
            return Err(RemoteError::invalid_param(
                name,
                format!(
                    "Invalid parameter range: {name} = {} > {}",
                    show(value),
                    show(max)
                ),
            ));
        }
        Ok(Some(value))
    }
}

#[derive(Clone, Copy)]
enum Radix {
    Long10,
    Int10,
    Short10,
    Short8,
}

/// HDFS's `UserParam` domain for `user.name` and `doas`.
///
/// # Errors
/// A name outside `^[A-Za-z_][A-Za-z0-9._-]*[$]?$`.
pub fn check_user_name(param: &str, name: &str) -> Result<(), RemoteError> {
    let body = name.strip_suffix('$').unwrap_or(name);
    let mut chars = body.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    let rest_ok = chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if first_ok && rest_ok {
        Ok(())
    } else {
        Err(RemoteError::invalid_param(
            param,
            format!(
                "Invalid value: \"{name}\" does not belong to the domain ^[A-Za-z_][A-Za-z0-9._-]*[$]?$"
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(q: &str) -> Params {
        Params::parse(Some(q))
    }

    #[test]
    fn numbers_have_hdfs_messages() {
        assert_eq!(p("offset=5").long("offset", 0), Ok(Some(5)));
        assert_eq!(p("").long("offset", 0), Ok(None));
        let e = p("offset=abc").long("offset", 0).expect_err("refused");
        assert_eq!(
            e.message,
            "Invalid value for webhdfs parameter \"offset\": Failed to parse \"abc\" as a radix-10 long integer."
        );
        let e = p("offset=-1").long("offset", 0).expect_err("refused");
        assert!(e
            .message
            .ends_with("Invalid parameter range: offset = -1 < 0"));
        let e = p("offset=99999999999999999999")
            .long("offset", 0)
            .expect_err("refused");
        assert!(e.message.contains("radix-10 long integer"));
        let e = p("permission=2000")
            .permission("permission")
            .expect_err("refused");
        assert!(e.message.ends_with("permission = 2000 > 1777"), "{e}");
        let e = p("permission=999")
            .permission("permission")
            .expect_err("refused");
        assert!(e.message.ends_with("as a radix-8 short integer."));
        assert_eq!(
            p("permission=644").permission("permission"),
            Ok(Some(0o644))
        );
        let e = p("replication=70000")
            .short("replication", 1)
            .expect_err("refused");
        assert!(e.message.contains("radix-10 short integer"));
        assert_eq!(e.status, StatusCode::BAD_REQUEST);
    }

    #[test]
    fn booleans_names_and_first_wins() {
        assert_eq!(p("overwrite=TRUE").boolean("overwrite", false), Ok(true));
        assert_eq!(p("").boolean("createparent", true), Ok(true));
        let e = p("recursive=maybe")
            .boolean("recursive", false)
            .expect_err("refused");
        assert!(e.message.ends_with("Failed to parse \"maybe\" to Boolean."));
        let q = p("op=LISTSTATUS&OP=GETFILESTATUS&xattr.name=a&xattr.name=b");
        assert_eq!(q.get("op"), Some("LISTSTATUS"));
        assert_eq!(q.all("xattr.name"), vec!["a", "b"]);
        assert!(check_user_name("user.name", "bob").is_ok());
        assert!(check_user_name("user.name", "host$").is_ok());
        assert!(check_user_name("user.name", "b b").is_err());
        assert!(check_user_name("doas", "").is_err());
    }

    #[test]
    fn statuses_follow_the_exception_handler() {
        assert_eq!(
            RemoteError::new(FILE_NOT_FOUND, "x").status,
            StatusCode::NOT_FOUND
        );
        assert_eq!(RemoteError::io("x").status, StatusCode::FORBIDDEN);
        assert_eq!(
            RemoteError::new("java.lang.NullPointerException", "x").status,
            StatusCode::INTERNAL_SERVER_ERROR
        );
        assert_eq!(
            RemoteError::new(SECURITY, "x").status,
            StatusCode::FORBIDDEN
        );
        assert_eq!(request_path("/webhdfs/v1").expect("root"), "/");
        assert_eq!(request_path("/webhdfs/v1/a%20b").expect("decoded"), "/a b");
        assert!(request_path("/webhdfs/v1/%ff").is_err());
        // As HDFS 3.4.1 reports them.
        for (asked, seen) in [
            ("/webhdfs/v1/wfz/..", "/wfz/../"),
            ("/webhdfs/v1/wfz/%2E%2E", "/wfz/../"),
            ("/webhdfs/v1/wfz/x/../..", "/wfz/x/../../"),
            ("/webhdfs/v1/.", "/./"),
            ("/webhdfs/v1/wfz/x/..", "/wfz/x/.."),
            ("/webhdfs/v1/wfz/.", "/wfz/."),
            ("/webhdfs/v1/wfz/x/../../", "/wfz/x/../../"),
            ("/webhdfs/v1/wfz//x", "/wfz//x"),
        ] {
            assert_eq!(request_path(asked).expect("valid"), seen, "{asked}");
        }
    }

    #[test]
    fn an_exception_of_a_nested_class_goes_by_its_own_name() {
        let e = RemoteError::new(
            "org.apache.hadoop.hdfs.protocol.FSLimitException$PathComponentTooLongException",
            "m",
        );
        let json = e.to_json();
        assert_eq!(
            json["RemoteException"]["exception"],
            "PathComponentTooLongException"
        );
        let e = RemoteError::new("java.io.FileNotFoundException", "m");
        assert_eq!(
            e.to_json()["RemoteException"]["exception"],
            "FileNotFoundException"
        );
    }
}
