//! The HTML shell of every web UI page: one small inline style sheet, a
//! navigation bar, no scripts and no external resources, so a page is one
//! request and renders the same offline.

use std::fmt::Write as _;

/// Escapes text for HTML element content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Percent-encodes a path or query value for a link (keeps `/`).
pub fn url_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// Bytes in binary units, as HDFS's UI shows them ("1.5 GB").
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KB", "MB", "GB", "TB", "PB"];
    let mut v = n as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{v:.2} {}", UNITS[unit])
    }
}

/// The (year, month, day, hour, minute, second) of a millisecond Unix
/// time, UTC (civil date from days since the epoch, Howard Hinnant's
/// algorithm).
pub fn civil_from_ms(ms: u64) -> (i64, i64, i64, i64, i64, i64) {
    let secs = i64::try_from(ms / 1000).unwrap_or(i64::MAX);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d, rem / 3600, rem % 3600 / 60, rem % 60)
}

/// A millisecond Unix time as UTC `YYYY-MM-DD HH:MM:SS`.
pub fn utc_time(ms: u64) -> String {
    let (year, month, day, h, m, s) = civil_from_ms(ms);
    format!("{year:04}-{month:02}-{day:02} {h:02}:{m:02}:{s:02} UTC")
}

/// `rwxr-xr-x` for permission bits (the sticky bit as `t`/`T`).
pub fn permission_symbolic(permission: u16) -> String {
    let mut s = String::with_capacity(9);
    for shift in [6u16, 3, 0] {
        let bits = (permission >> shift) & 7;
        s.push(if bits & 4 != 0 { 'r' } else { '-' });
        s.push(if bits & 2 != 0 { 'w' } else { '-' });
        s.push(if bits & 1 != 0 { 'x' } else { '-' });
    }
    if permission & 0o1000 != 0 {
        s.pop();
        s.push(if permission & 1 != 0 { 't' } else { 'T' });
    }
    s
}

const STYLE: &str = "body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#1d2330;background:#f5f6f8}\
nav{background:#1f3a5f;padding:0 1.5em;display:flex;gap:1.2em;align-items:center}\
nav a{color:#dfe8f5;text-decoration:none;padding:.9em 0;display:inline-block}\
nav a.on{color:#fff;border-bottom:3px solid #7fb2ff}nav .brand{color:#fff;font-weight:600;margin-right:1em}\
main{padding:1.2em 1.5em;max-width:1200px}h1{font-size:1.4em;margin:.3em 0 .8em}h2{font-size:1.1em;margin:1.4em 0 .5em}\
table{border-collapse:collapse;background:#fff;margin-bottom:1em;min-width:40%}\
th,td{border:1px solid #d6dae1;padding:.35em .7em;text-align:left;font-size:.92em;vertical-align:top}\
th{background:#eef1f5;font-weight:600}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\
table.kv th{width:16em}.ok{color:#17692e;font-weight:600}.bad{color:#a4161a;font-weight:600}.warn{color:#9a6700;font-weight:600}\
.bar{background:#e3e7ee;width:12em;height:.8em;display:inline-block;vertical-align:middle}.bar span{background:#3b7ddd;height:100%;display:block}\
form{margin:.6em 0}input,select,button{font-size:.95em;padding:.2em .4em}code,pre{font-family:ui-monospace,monospace;font-size:.9em}\
pre{background:#fff;border:1px solid #d6dae1;padding:.8em;overflow:auto}.muted{color:#5b6472}";

/// A whole page: `<title>`, the navigation bar (`nav`: href and label;
/// the one whose href is `active` is highlighted) and `body` (HTML).
pub fn page(brand: &str, title: &str, nav: &[(&str, &str)], active: &str, body: &str) -> String {
    let mut links = String::new();
    for (href, label) in nav {
        let class = if *href == active { " class=\"on\"" } else { "" };
        let _ = write!(links, "<a href=\"{href}\"{class}>{}</a>", esc(label));
    }
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{} - {}</title><link rel=\"icon\" href=\"data:,\"><style>{STYLE}</style></head>\
         <body><nav><span class=\"brand\">{}</span>{links}</nav><main><h1>{}</h1>\n{body}\n</main></body></html>\n",
        esc(title),
        esc(brand),
        esc(brand),
        esc(title)
    )
}

/// A two-column table of (label, HTML value) rows.
pub fn kv_table(rows: &[(&str, String)]) -> String {
    let mut out = String::from("<table class=\"kv\">");
    for (k, v) in rows {
        let _ = write!(out, "<tr><th>{}</th><td>{v}</td></tr>", esc(k));
    }
    out.push_str("</table>");
    out
}

/// A usage bar for `used` of `total`.
pub fn usage_bar(used: u64, total: u64) -> String {
    let pct = if total == 0 {
        0.0
    } else {
        used as f64 * 100.0 / total as f64
    };
    format!(
        "<span class=\"bar\" title=\"{pct:.2}%\"><span style=\"width:{:.1}%\"></span></span> {pct:.2}%",
        pct.min(100.0)
    )
}

/// The HTML response for a page.
pub fn html(body: String) -> axum::response::Response {
    use axum::response::IntoResponse;
    (
        [(axum::http::header::CONTENT_TYPE, "text/html; charset=utf-8")],
        body,
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers() {
        assert_eq!(
            esc("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
        assert_eq!(url_encode("/a b/ü?"), "/a%20b/%C3%BC%3F");
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(1536), "1.50 KB");
        assert_eq!(utc_time(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc_time(1_700_000_000_000), "2023-11-14 22:13:20 UTC");
        let p = page("Cairn", "Overview", &[("/", "Overview")], "/", "<p>x</p>");
        assert!(p.contains("<a href=\"/\" class=\"on\">Overview</a>"));
    }
}
