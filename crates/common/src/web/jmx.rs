//! `/jmx` as HDFS's `JMXJsonServlet` writes it: `{"beans": [{"name":
//! "Hadoop:service=NameNode,name=FSNamesystem", "modelerType": ..., <attrs>}]}`,
//! filtered by `?qry=<ObjectName pattern>` (default `*:*`) or narrowed to
//! one attribute by `?get=<bean>::<attr>`. The servers build their beans
//! (with HDFS's bean and attribute names) and this module does the rest.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::Value;

/// One MBean: its ObjectName, modeler type and attributes in order.
#[derive(Debug, Clone)]
pub struct Bean {
    pub name: String,
    pub modeler_type: String,
    pub attrs: Vec<(String, Value)>,
}

impl Bean {
    pub fn new(name: impl Into<String>, modeler_type: impl Into<String>) -> Self {
        Bean {
            name: name.into(),
            modeler_type: modeler_type.into(),
            attrs: Vec::new(),
        }
    }

    /// Adds an attribute.
    pub fn attr(mut self, name: &str, value: impl Into<Value>) -> Self {
        self.attrs.push((name.to_string(), value.into()));
        self
    }

    /// Adds an attribute in place.
    pub fn push(&mut self, name: impl Into<String>, value: impl Into<Value>) {
        self.attrs.push((name.into(), value.into()));
    }

    /// An attribute's value.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.attrs.iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }

    fn to_json(&self, only: Option<&str>) -> String {
        let mut fields = vec![
            format!("\"name\" : {}", Value::from(self.name.as_str())),
            format!(
                "\"modelerType\" : {}",
                Value::from(self.modeler_type.as_str())
            ),
        ];
        for (k, v) in &self.attrs {
            if only.is_some_and(|o| o != k) {
                continue;
            }
            fields.push(format!("{} : {}", Value::from(k.as_str()), pretty(v, 2)));
        }
        format!("{{\n    {}\n  }}", fields.join(",\n    "))
    }
}

/// A value as Jackson's default pretty printer writes it at `depth` (two
/// spaces a level): objects a field a line, arrays on one line.
fn pretty(v: &Value, depth: usize) -> String {
    match v {
        Value::Object(m) if m.is_empty() => "{ }".to_string(),
        Value::Object(m) => {
            let inner = "  ".repeat(depth + 1);
            let fields: Vec<String> = m
                .iter()
                .map(|(k, v)| {
                    format!(
                        "{inner}{} : {}",
                        Value::from(k.as_str()),
                        pretty(v, depth + 1)
                    )
                })
                .collect();
            format!("{{\n{}\n{}}}", fields.join(",\n"), "  ".repeat(depth))
        }
        Value::Array(a) if a.is_empty() => "[ ]".to_string(),
        Value::Array(a) => {
            let items: Vec<String> = a.iter().map(|v| pretty(v, depth)).collect();
            format!("[ {} ]", items.join(", "))
        }
        other => other.to_string(),
    }
}

/// One metrics record in Hadoop's metrics2 shape: a source's numeric
/// metrics with its tags. It is both a JMX bean (`Hadoop:service=<service>,
/// name=<bean>`, tags as `tag.<Name>` attributes) and a set of Prometheus
/// samples named as HDFS's `PrometheusMetricsSink` names them.
#[derive(Debug, Clone)]
pub struct Record {
    /// The `name=` of the bean (`FSNamesystem`, `RpcActivityForPort8020`).
    pub bean: String,
    /// The metrics2 record name (`FSNamesystem`, `rpc`), the Prometheus prefix.
    pub record: String,
    pub modeler_type: String,
    /// Tags, `Context` and `Hostname` first.
    pub tags: Vec<(String, String)>,
    /// (name, is a counter, value).
    pub metrics: Vec<(String, bool, Value)>,
}

impl Record {
    pub fn new(bean: &str, record: &str, context: &str, hostname: &str) -> Self {
        Record {
            bean: bean.to_string(),
            record: record.to_string(),
            modeler_type: bean.to_string(),
            tags: vec![
                ("Context".to_string(), context.to_string()),
                ("Hostname".to_string(), hostname.to_string()),
            ],
            metrics: Vec::new(),
        }
    }

    pub fn tag(mut self, name: &str, value: &str) -> Self {
        self.tags.push((name.to_string(), value.to_string()));
        self
    }

    /// A monotonic counter.
    pub fn counter(&mut self, name: &str, value: u64) {
        self.metrics
            .push((name.to_string(), true, Value::from(value)));
    }

    /// A gauge.
    pub fn gauge(&mut self, name: &str, value: impl Into<Value>) {
        self.metrics.push((name.to_string(), false, value.into()));
    }

    /// A rate as metrics2's `MutableRate`: `<name>NumOps` (a counter) and
    /// `<name>AvgTime` (a gauge, milliseconds), from a count and a sum of
    /// microseconds.
    pub fn rate(&mut self, name: &str, count: u64, sum_us: u64) {
        self.counter(&format!("{name}NumOps"), count);
        let avg_ms = if count == 0 {
            0.0
        } else {
            sum_us as f64 / count as f64 / 1000.0
        };
        self.gauge(&format!("{name}AvgTime"), avg_ms);
    }

    /// The bean of `service` (`NameNode`, `DataNode`).
    pub fn to_bean(&self, service: &str) -> Bean {
        let mut b = Bean::new(
            format!("Hadoop:service={service},name={}", self.bean),
            self.modeler_type.clone(),
        );
        for (k, v) in &self.tags {
            b.push(format!("tag.{k}"), v.as_str());
        }
        for (k, _, v) in &self.metrics {
            b.push(k.clone(), v.clone());
        }
        b
    }

    /// Writes the record's samples (tags become lower-case labels).
    pub fn write_prom(&self, w: &mut crate::metrics::PromWriter) {
        let labels: Vec<(String, String)> = self
            .tags
            .iter()
            .map(|(k, v)| (k.to_lowercase(), v.clone()))
            .collect();
        let labels: Vec<(&str, &str)> = labels
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        for (name, counter, v) in &self.metrics {
            let Some(value) = v.as_f64() else { continue };
            let kind = if *counter { "counter" } else { "gauge" };
            w.sample(
                &crate::metrics::prometheus_name(&self.record, name),
                kind,
                &labels,
                value,
            );
        }
    }
}

/// An ObjectName or ObjectName pattern: `domain:key=value,...`, `*` and
/// `?` wildcards in the domain and values, a trailing `*` property meaning
/// "other keys allowed".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectName {
    domain: String,
    props: Vec<(String, String)>,
    /// The property list is a pattern (`,*`): other keys may be present.
    open: bool,
}

impl ObjectName {
    /// Parses `s`; `None` when it is not an ObjectName (no `:`, a property
    /// without `=`, an empty key).
    pub fn parse(s: &str) -> Option<ObjectName> {
        let (domain, rest) = s.split_once(':')?;
        let mut props = Vec::new();
        let mut open = false;
        for p in rest.split(',') {
            if p == "*" {
                open = true;
                continue;
            }
            let (k, v) = p.split_once('=')?;
            if k.is_empty() {
                return None;
            }
            props.push((k.to_string(), v.to_string()));
        }
        if props.is_empty() && !open {
            return None;
        }
        Some(ObjectName {
            domain: domain.to_string(),
            props,
            open,
        })
    }

    /// Whether `name` (a bean's ObjectName) matches this pattern.
    pub fn matches(&self, name: &ObjectName) -> bool {
        if !glob(&self.domain, &name.domain) {
            return false;
        }
        if !self.open && self.props.len() != name.props.len() {
            return false;
        }
        self.props.iter().all(|(k, pattern)| {
            name.props
                .iter()
                .any(|(nk, nv)| nk == k && glob(pattern, nv))
        })
    }
}

/// `*` (any run) and `?` (any one character) wildcards.
fn glob(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    // Iterative matcher with one backtrack point: linear-ish, no recursion
    // on hostile patterns.
    let (mut pi, mut ti) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ti));
                pi += 1;
            }
            Some(c) if *c == '?' || Some(c) == t.get(ti) => {
                pi += 1;
                ti += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    pi = sp + 1;
                    ti = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    p.get(pi..)
        .is_some_and(|rest| rest.iter().all(|c| *c == '*'))
}

fn error(status: StatusCode, message: &str) -> Response {
    let body = format!(
        "{{\n  \"result\" : \"ERROR\",\n  \"message\" : {}\n}}\n",
        Value::from(message)
    );
    json_text(status, body)
}

fn json_text(status: StatusCode, body: String) -> Response {
    (
        status,
        [
            (
                axum::http::header::CONTENT_TYPE,
                "application/json; charset=utf8",
            ),
            (axum::http::header::ACCESS_CONTROL_ALLOW_METHODS, "GET"),
            (axum::http::header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"),
        ],
        body,
    )
        .into_response()
}

/// The `/jmx` answer for a query string's `qry` and `get` over `beans`.
pub fn respond(beans: &[Bean], qry: Option<&str>, get: Option<&str>) -> Response {
    if let Some(get) = get {
        let Some((bean_name, attr)) = get.split_once("::") else {
            return error(StatusCode::BAD_REQUEST, "query format is not as expected.");
        };
        if ObjectName::parse(bean_name).is_none() {
            return error(StatusCode::BAD_REQUEST, "Malformed ObjectName");
        }
        let Some(bean) = beans.iter().find(|b| b.name == bean_name) else {
            return error(
                StatusCode::NOT_FOUND,
                &format!("No bean with name {bean_name} was found."),
            );
        };
        if bean.get(attr).is_none() {
            return error(
                StatusCode::NOT_FOUND,
                &format!("No attribute with name {attr} was found."),
            );
        }
        return json_text(StatusCode::OK, render(&[bean], Some(attr)));
    }
    let pattern = qry.unwrap_or("*:*");
    let Some(pattern) = ObjectName::parse(pattern) else {
        return error(StatusCode::BAD_REQUEST, "Malformed ObjectName");
    };
    let chosen: Vec<&Bean> = beans
        .iter()
        .filter(|b| ObjectName::parse(&b.name).is_some_and(|n| pattern.matches(&n)))
        .collect();
    json_text(StatusCode::OK, render(&chosen, None))
}

fn render(beans: &[&Bean], only: Option<&str>) -> String {
    let parts: Vec<String> = beans.iter().map(|b| b.to_json(only)).collect();
    if parts.is_empty() {
        return "{\n  \"beans\" : [ ]\n}\n".to_string();
    }
    format!("{{\n  \"beans\" : [ {} ]\n}}\n", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(s: &str) -> ObjectName {
        ObjectName::parse(s).expect("object name")
    }

    #[test]
    fn nested_values_are_written_as_jackson_writes_them() {
        // Goal: HDFS's BlockStats bean, byte for byte as its /jmx wrote it.
        let b = Bean::new("Hadoop:service=NameNode,name=BlockStats", "BlockManager").attr(
            "StorageTypeStats",
            serde_json::json!([{"key": "DISK", "value": {"capacityUsed": 8, "nodesInService": 1}}]),
        )
        .attr("Empty", serde_json::json!([]))
        .attr("Names", serde_json::json!(["a", "b"]));
        assert_eq!(
            b.to_json(None),
            "{\n    \"name\" : \"Hadoop:service=NameNode,name=BlockStats\",\n    \"modelerType\" : \"BlockManager\",\n    \
             \"StorageTypeStats\" : [ {\n      \"key\" : \"DISK\",\n      \"value\" : {\n        \
             \"capacityUsed\" : 8,\n        \"nodesInService\" : 1\n      }\n    } ],\n    \
             \"Empty\" : [ ],\n    \"Names\" : [ \"a\", \"b\" ]\n  }"
        );
    }

    #[test]
    fn patterns_match_as_jmx() {
        let fs = name("Hadoop:service=NameNode,name=FSNamesystem");
        assert!(name("*:*").matches(&fs));
        assert!(name("Hadoop:*").matches(&fs));
        assert!(name("Hadoop:service=NameNode,name=*").matches(&fs));
        assert!(name("Hadoop:service=NameNode,name=FSNamesystem").matches(&fs));
        assert!(name("Hadoop:name=FSNamesystem,service=NameNode").matches(&fs));
        assert!(name("Hadoop:name=FSNamesystem,*").matches(&fs));
        assert!(!name("Hadoop:name=FSNamesystem").matches(&fs));
        assert!(!name("Hadoop:service=NameNode,name=FSNamesystemState").matches(&fs));
        assert!(name("Hadoop:service=NameNode,name=RpcActivityForPort*")
            .matches(&name("Hadoop:service=NameNode,name=RpcActivityForPort8020")));
        assert!(ObjectName::parse("nocolon").is_none());
        assert!(ObjectName::parse("a:b").is_none());
        assert!(glob("a?c*", "abcdef"));
        assert!(!glob("a?c", "abcd"));
        assert!(glob(&"*".repeat(50), &"x".repeat(50)));
    }

    #[test]
    fn respond_filters_and_gets() {
        let beans = vec![
            Bean::new("Hadoop:service=NameNode,name=A", "A").attr("X", 1),
            Bean::new("Hadoop:service=NameNode,name=B", "B").attr("Y", "two"),
        ];
        let v = |r: Response| -> (StatusCode, Value) {
            let status = r.status();
            let body = futures_body(r);
            (status, serde_json::from_str(&body).expect("json"))
        };
        let (s, all) = v(respond(&beans, None, None));
        assert_eq!(s, StatusCode::OK);
        assert_eq!(all["beans"].as_array().map(Vec::len), Some(2));
        let (_, one) = v(respond(
            &beans,
            Some("Hadoop:service=NameNode,name=B"),
            None,
        ));
        assert_eq!(one["beans"][0]["Y"], "two");
        assert_eq!(one["beans"][0]["modelerType"], "B");
        let (_, got) = v(respond(
            &beans,
            None,
            Some("Hadoop:service=NameNode,name=A::X"),
        ));
        assert_eq!(got["beans"][0]["X"], 1);
        let (s, e) = v(respond(&beans, Some("bad"), None));
        assert_eq!(s, StatusCode::BAD_REQUEST);
        assert_eq!(e["result"], "ERROR");
        let (s, _) = v(respond(
            &beans,
            None,
            Some("Hadoop:service=NameNode,name=A::Z"),
        ));
        assert_eq!(s, StatusCode::NOT_FOUND);
    }

    fn futures_body(r: Response) -> String {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        let bytes = rt
            .block_on(axum::body::to_bytes(r.into_body(), 1 << 20))
            .expect("body");
        String::from_utf8_lossy(&bytes).into_owned()
    }
}
