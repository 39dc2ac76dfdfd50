//! `/conf` as HDFS's `ConfServlet`: the server's configuration as
//! Hadoop's `<configuration>` XML (the default) or, with `format=json` or
//! an `Accept: application/json` header, `{"properties": [{"key", "value",
//! "isFinal", "resource"}]}`; `name=<key>` narrows it to one property (404
//! when unknown). Shown: every property the server was started with (site
//! files, `-D` flags, flags of `cairn`), with where it was set, and every
//! key it read and found unset, with the default it runs with (resource
//! `default`), as HDFS's lists its `*-default.xml` values.

use std::collections::HashMap;

use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use crate::config::{Configuration, Origin};

/// Where a property came from, as HDFS names a resource.
fn resource(origin: Option<&Origin>) -> String {
    match origin {
        Some(Origin::File(p)) => p
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_else(|| p.display().to_string()),
        Some(Origin::Override) | Some(Origin::Argument) => "command line".into(),
        Some(Origin::Programmatic) => "programmatically".into(),
        Some(Origin::Default) | None => "default".into(),
    }
}

fn xml_escape(s: &str) -> String {
    crate::web::page::esc(s)
}

/// The `/conf` answer.
pub fn respond(
    conf: &Configuration,
    query: &HashMap<String, String>,
    headers: &HeaderMap,
) -> Response {
    let wants_json = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.contains("application/json"));
    let format = match query.get("format").map(String::as_str) {
        Some("json") => "json",
        Some("xml") => "xml",
        Some(other) => {
            return (StatusCode::BAD_REQUEST, format!("Bad format: {other}\n")).into_response()
        }
        None if wants_json => "json",
        None => "xml",
    };
    let mut props = conf.effective();
    if let Some(name) = query.get("name") {
        props.retain(|(k, _, _)| k == name);
        if props.is_empty() {
            return (
                StatusCode::NOT_FOUND,
                format!("Property {name} not found\n"),
            )
                .into_response();
        }
    }
    let entries: Vec<(String, String, bool, String)> = props
        .into_iter()
        .map(|(k, v, origin)| {
            let is_final = conf.is_final(&k);
            (k, v, is_final, resource(Some(&origin)))
        })
        .collect();
    if format == "json" {
        let as_json = |(k, v, f, r): &(String, String, bool, String)| serde_json::json!({"key": k, "value": v, "isFinal": f, "resource": r});
        let body: Value = if query.contains_key("name") {
            serde_json::json!({"property": entries.first().map(as_json)})
        } else {
            serde_json::json!({"properties": entries.iter().map(as_json).collect::<Vec<_>>()})
        };
        return (
            [(header::CONTENT_TYPE, "application/json; charset=utf-8")],
            body.to_string(),
        )
            .into_response();
    }
    let mut xml =
        String::from("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?><configuration>");
    for (k, v, f, r) in &entries {
        xml.push_str(&format!(
            "<property><name>{}</name><value>{}</value><final>{f}</final><source>{}</source></property>",
            xml_escape(k),
            xml_escape(v),
            xml_escape(r)
        ));
    }
    xml.push_str("</configuration>\n");
    ([(header::CONTENT_TYPE, "text/xml; charset=utf-8")], xml).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(r: Response) -> (StatusCode, String) {
        let status = r.status();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        let b = rt
            .block_on(axum::body::to_bytes(r.into_body(), 1 << 20))
            .expect("body");
        (status, String::from_utf8_lossy(&b).into_owned())
    }

    #[test]
    fn xml_json_and_name_filter() {
        let mut conf = Configuration::new();
        conf.set("dfs.replication", "2");
        conf.set("a.b", "<x&y>");
        let q = |pairs: &[(&str, &str)]| -> HashMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let (s, xml) = body(respond(&conf, &q(&[]), &HeaderMap::new()));
        assert_eq!(s, StatusCode::OK);
        assert!(xml.contains("<property><name>dfs.replication</name><value>2</value><final>false</final><source>programmatically</source></property>"), "{xml}");
        assert!(xml.contains("<value>&lt;x&amp;y&gt;</value>"));
        let (_, json) = body(respond(&conf, &q(&[("format", "json")]), &HeaderMap::new()));
        let v: Value = serde_json::from_str(&json).expect("json");
        assert_eq!(v["properties"].as_array().map(Vec::len), Some(2));
        let (_, one) = body(respond(
            &conf,
            &q(&[("format", "json"), ("name", "dfs.replication")]),
            &HeaderMap::new(),
        ));
        let v: Value = serde_json::from_str(&one).expect("json");
        assert_eq!(v["property"]["value"], "2");
        let (s, _) = body(respond(&conf, &q(&[("name", "nope")]), &HeaderMap::new()));
        assert_eq!(s, StatusCode::NOT_FOUND);
        let (s, _) = body(respond(&conf, &q(&[("format", "yaml")]), &HeaderMap::new()));
        assert_eq!(s, StatusCode::BAD_REQUEST);
    }

    #[test]
    fn keys_read_at_their_defaults_are_listed_with_them() {
        // Goal: as HDFS's /conf answers `name=dfs.blocksize` on a server
        // that never set it, with the value the server runs with.
        let mut conf = Configuration::new();
        conf.set("dfs.replication", "2");
        let kept = conf.clone();
        // Read after the clone (a server keeps its clone first).
        assert_eq!(
            conf.get_bytes("dfs.blocksize", 128 << 20).ok(),
            Some(128 << 20)
        );
        assert_eq!(conf.get_u32("dfs.replication", 3).ok(), Some(2));
        let beat = conf.get_duration(
            "dfs.heartbeat.interval",
            crate::config::TimeUnit::Seconds,
            std::time::Duration::from_secs(3),
        );
        assert!(beat.is_ok());
        let q = |name: &str| HashMap::from([("name".to_string(), name.to_string())]);
        let (s, xml) = body(respond(&kept, &q("dfs.blocksize"), &HeaderMap::new()));
        assert_eq!(s, StatusCode::OK);
        assert!(xml.contains("<property><name>dfs.blocksize</name><value>134217728</value><final>false</final><source>default</source></property>"), "{xml}");
        let (_, xml) = body(respond(
            &kept,
            &q("dfs.heartbeat.interval"),
            &HeaderMap::new(),
        ));
        assert!(xml.contains("<value>3</value>"), "{xml}");
        // A key set keeps its own value and origin.
        let (_, xml) = body(respond(&kept, &q("dfs.replication"), &HeaderMap::new()));
        assert!(
            xml.contains("<value>2</value><final>false</final><source>programmatically</source>"),
            "{xml}"
        );
        let (_, all) = body(respond(&kept, &HashMap::new(), &HeaderMap::new()));
        assert_eq!(all.matches("<property>").count(), 3, "{all}");
    }
}
