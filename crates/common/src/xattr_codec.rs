//! Extended-attribute names and values as Hadoop's `XAttrHelper` and
//! `XAttrCodec` write and read them (`user.name`; `"text"`, `0x` hex, `0s`
//! base64), shared by `cairn dfs -getfattr/-setfattr` and WebHDFS.

use base64::Engine;

/// How values are shown (`XAttrCodec`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Text,
    Hex,
    Base64,
}

impl Encoding {
    /// `TEXT`, `HEX` or `BASE64`, any case.
    pub fn parse(s: &str) -> Option<Encoding> {
        match s.to_ascii_uppercase().as_str() {
            "TEXT" => Some(Encoding::Text),
            "HEX" => Some(Encoding::Hex),
            "BASE64" => Some(Encoding::Base64),
            _ => None,
        }
    }
}

/// `XAttrHelper.buildXAttr`: `ns.name` split into the namespace number
/// (`XAttrNamespaceProto`) and the name, or HDFS's message.
///
/// # Errors
/// No known namespace prefix, or an empty name.
pub fn parse_name(full: &str) -> Result<(i32, String), String> {
    let prefix_error = || {
        "An XAttr name must be prefixed with user/trusted/security/system/raw, followed by a '.'"
            .to_string()
    };
    let dot = full.find('.').ok_or_else(prefix_error)?;
    if dot < 3 {
        return Err(prefix_error());
    }
    if dot == full.len() - 1 {
        return Err("XAttr name cannot be empty.".to_string());
    }
    let namespace = match full[..dot].to_ascii_lowercase().as_str() {
        "user" => 0,
        "trusted" => 1,
        "security" => 2,
        "system" => 3,
        "raw" => 4,
        _ => return Err(prefix_error()),
    };
    Ok((namespace, full[dot + 1..].to_owned()))
}

/// `XAttrCodec.decodeValue`: `"text"`, `0x` hex, `0s` base64, or the
/// bytes of the string itself.
///
/// # Errors
/// Bad hex digits, with Commons Codec's message.
pub fn decode_value(value: &str) -> Result<Vec<u8>, String> {
    if value.len() >= 2 {
        if value.starts_with('"') && value.ends_with('"') {
            return Ok(value.as_bytes()[1..value.len() - 1].to_vec());
        }
        let (head, rest) = value.split_at(2);
        if head.eq_ignore_ascii_case("0x") {
            return decode_hex(rest);
        }
        if head.eq_ignore_ascii_case("0s") {
            // Commons Codec's decoder skips what is not base64.
            let clean: String = rest
                .chars()
                .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '-' | '_'))
                .map(|c| match c {
                    '-' => '+',
                    '_' => '/',
                    other => other,
                })
                .collect();
            return Ok(base64::engine::general_purpose::STANDARD_NO_PAD
                .decode(clean.as_bytes())
                .unwrap_or_default());
        }
    }
    Ok(value.as_bytes().to_vec())
}

/// Commons Codec's `Hex.decodeHex`, with its messages.
fn decode_hex(text: &str) -> Result<Vec<u8>, String> {
    let chars: Vec<char> = text.chars().collect();
    if !chars.len().is_multiple_of(2) {
        return Err("org.apache.commons.codec.DecoderException: Odd number of characters.".into());
    }
    let digit = |i: usize| {
        chars[i].to_digit(16).ok_or_else(|| {
            format!(
                "org.apache.commons.codec.DecoderException: Illegal hexadecimal character {} at index {i}",
                chars[i]
            )
        })
    };
    (0..chars.len())
        .step_by(2)
        .map(|i| Ok(u8::try_from(digit(i)? * 16 + digit(i + 1)?).unwrap_or(0)))
        .collect()
}

/// `XAttrCodec.encodeValue`.
pub fn encode_value(value: &[u8], encoding: Encoding) -> String {
    match encoding {
        Encoding::Text => format!("\"{}\"", String::from_utf8_lossy(value)),
        Encoding::Hex => {
            let hex: String = value.iter().map(|b| format!("{b:02x}")).collect();
            format!("0x{hex}")
        }
        Encoding::Base64 => format!(
            "0s{}",
            base64::engine::general_purpose::STANDARD.encode(value)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_and_names() {
        assert_eq!(decode_value("123").expect("text"), b"123");
        assert_eq!(decode_value("\"a b\"").expect("quoted"), b"a b");
        assert_eq!(decode_value("0x616263").expect("hex"), b"abc");
        assert_eq!(decode_value("0X6A").expect("hex"), b"j");
        assert_eq!(decode_value("0sYWJj").expect("base64"), b"abc");
        assert!(decode_value("0x123").is_err());
        assert!(decode_value("0xzz").is_err());
        assert_eq!(encode_value(b"123", Encoding::Hex), "0x313233");
        assert_eq!(encode_value(b"123", Encoding::Base64), "0sMTIz");
        assert_eq!(parse_name("user.k"), Ok((0, "k".to_string())));
        assert!(parse_name("bad").is_err());
        assert_eq!(Encoding::parse("hex"), Some(Encoding::Hex));
    }
}
