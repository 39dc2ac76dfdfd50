//! Reading one Hadoop configuration file (`core-site.xml`, `hdfs-site.xml`)
//! into a list of properties, in file order.
//!
//! The format is Hadoop's:
//!
//! ```xml
//! <configuration>
//!   <property>
//!     <name>dfs.replication</name>
//!     <value>3</value>
//!     <final>true</final>
//!   </property>
//!   <property name="dfs.blocksize" value="128m"/>
//! </configuration>
//! ```
//!
//! Like Hadoop's streaming parser, `<property>` elements count wherever they
//! sit under `<configuration>`, both the element form and the attribute form
//! are read (elements win over attributes), and `<description>`, `<source>`
//! and `<tag>` are ignored. A property without a name is skipped; one with an
//! absent or empty `<value>` sets nothing but can still be marked final, as in
//! Hadoop. `<xi:include>` is refused rather than silently skipped: dropping the
//! included settings would start a server with a configuration nobody wrote.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// Configuration files are small; anything bigger is not one. Bounds the
/// memory a wrong `HADOOP_CONF_DIR` can make us allocate.
pub(crate) const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// One `<property>` as written in the file.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Property {
    /// Trimmed, never empty.
    pub name: String,
    /// Trimmed; `None` when the file gives no value (Hadoop then leaves any
    /// earlier value in place).
    pub value: Option<String>,
    /// `<final>true</final>`: later files may not override this key.
    pub is_final: bool,
}

/// Why a file could not be turned into properties.
#[derive(Debug)]
pub(crate) enum FileProblem {
    Io(io::Error),
    Syntax(roxmltree::Error),
    Structure(String),
}

/// Reads and parses `path`; `Ok(None)` when it does not exist.
pub(crate) fn read_file(path: &Path) -> Result<Option<Vec<Property>>, FileProblem> {
    let file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(FileProblem::Io(e)),
    };
    let mut text = String::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(FileProblem::Io)?;
    if u64::try_from(text.len()).map_or(true, |len| len > MAX_FILE_BYTES) {
        return Err(FileProblem::Structure(format!(
            "larger than {MAX_FILE_BYTES} bytes; not a configuration file"
        )));
    }
    parse(&text).map(Some)
}

/// Parses the text of one configuration file.
pub(crate) fn parse(text: &str) -> Result<Vec<Property>, FileProblem> {
    let doc = roxmltree::Document::parse(text).map_err(FileProblem::Syntax)?;
    let root = doc.root_element();
    if root.tag_name().name() != "configuration" {
        return Err(FileProblem::Structure(format!(
            "top-level element is <{}>, expected <configuration>",
            root.tag_name().name()
        )));
    }
    let mut properties = Vec::new();
    for node in root.descendants().filter(roxmltree::Node::is_element) {
        match node.tag_name().name() {
            "property" => properties.extend(parse_property(node)),
            "include" => {
                return Err(FileProblem::Structure(
                    "<xi:include> is not supported; copy the included properties into this file"
                        .to_owned(),
                ))
            }
            _ => {}
        }
    }
    Ok(properties)
}

fn parse_property(node: roxmltree::Node<'_, '_>) -> Option<Property> {
    let mut name = node.attribute("name").map(str::to_owned);
    let mut value = node.attribute("value").map(str::to_owned);
    let mut is_final = node.attribute("final").is_some_and(|f| f.trim() == "true");
    for child in node.children().filter(roxmltree::Node::is_element) {
        let text = element_text(child);
        match child.tag_name().name() {
            "name" if !text.is_empty() => name = Some(text),
            // Hadoop treats `<value></value>` as no value at all, not as "".
            "value" if !text.is_empty() => value = Some(text),
            "final" => is_final = text.trim() == "true",
            _ => {}
        }
    }
    let name = name
        .map(|n| n.trim().to_owned())
        .filter(|n| !n.is_empty())?;
    Some(Property {
        name,
        value: value.map(|v| v.trim().to_owned()),
        is_final,
    })
}

/// All text inside an element (CDATA and entities included, comments not).
fn element_text(node: roxmltree::Node<'_, '_>) -> String {
    node.descendants()
        .filter(roxmltree::Node::is_text)
        .filter_map(|n| n.text())
        .collect()
}
