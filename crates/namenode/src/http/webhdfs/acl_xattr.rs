//! ACL and extended-attribute operations: GETACLSTATUS, SETACL,
//! MODIFYACLENTRIES, REMOVEACLENTRIES, REMOVEDEFAULTACL, REMOVEACL;
//! GETXATTRS, LISTXATTRS, SETXATTR, REMOVEXATTR.

use std::sync::Arc;

use axum::http::Method;
use axum::response::Response;
use cairn_common::webhdfs as web;
use cairn_common::xattr_codec::{self, Encoding};
use cairn_proto::hadoop::hdfs as pb;
use serde_json::json;

use super::{call, json, ok_json, WebError, WebRequest};
use crate::service::NameNodeState;

/// `AclPermissionParam`'s domain, quoted in its message.
const ACL_SPEC_DOMAIN: &str = "^(default:)?(user|group|mask|other):[[A-Za-z_][A-Za-z0-9._-]]*:([rwx-]{3})?(,(default:)?(user|group|mask|other):[[A-Za-z_][A-Za-z0-9._-]]*:([rwx-]{3})?)*$";

/// `XAttrSetFlag` bits.
const XATTR_CREATE: u32 = 1;
const XATTR_REPLACE: u32 = 2;

/// The operation of `req`, if it is one of this file's.
pub(super) async fn run(
    state: &Arc<NameNodeState>,
    req: &WebRequest,
) -> Option<Result<Response, WebError>> {
    let result = match (&req.method, req.op.as_str()) {
        (&Method::GET, "GETACLSTATUS") => acl_status(state, req).await,
        (&Method::PUT, "SETACL") => change_acl(state, req, "setAcl").await,
        (&Method::PUT, "MODIFYACLENTRIES") => change_acl(state, req, "modifyAclEntries").await,
        (&Method::PUT, "REMOVEACLENTRIES") => change_acl(state, req, "removeAclEntries").await,
        (&Method::PUT, "REMOVEDEFAULTACL") => change_acl(state, req, "removeDefaultAcl").await,
        (&Method::PUT, "REMOVEACL") => change_acl(state, req, "removeAcl").await,
        (&Method::GET, "GETXATTRS") => get_xattrs(state, req).await,
        (&Method::GET, "LISTXATTRS") => list_xattrs(state, req).await,
        (&Method::PUT, "SETXATTR") => set_xattr(state, req).await,
        (&Method::PUT, "REMOVEXATTR") => remove_xattr(state, req).await,
        _ => return None,
    };
    Some(result)
}

async fn acl_status(state: &Arc<NameNodeState>, req: &WebRequest) -> Result<Response, WebError> {
    let r: pb::GetAclStatusResponseProto = call(
        state,
        req,
        "getAclStatus",
        &pb::GetAclStatusRequestProto {
            src: req.path.clone(),
        },
    )
    .await?;
    Ok(ok_json("AclStatus", json::acl_status(&r.result)))
}

/// One entry of an ACL spec: `[default:]type:name:[perm]`.
fn parse_acl_entry(text: &str) -> Option<pb::AclEntryProto> {
    use pb::acl_entry_proto::{AclEntryScopeProto as Scope, AclEntryTypeProto as Type};
    let (scope, rest) = match text.strip_prefix("default:") {
        Some(rest) => (Scope::Default, rest),
        None => (Scope::Access, text),
    };
    let mut parts = rest.split(':');
    let kind = match parts.next()? {
        "user" => Type::User,
        "group" => Type::Group,
        "mask" => Type::Mask,
        "other" => Type::Other,
        _ => return None,
    };
    let name = parts.next()?;
    let perm = parts.next()?;
    if parts.next().is_some() || !valid_acl_name(name) {
        return None;
    }
    let permissions = if perm.is_empty() {
        0
    } else {
        super::read_ops::parse_fs_action(perm)?
    };
    Some(pb::AclEntryProto {
        r#type: kind as i32,
        scope: scope as i32,
        permissions,
        name: (!name.is_empty()).then(|| name.to_string()),
    })
}

fn valid_acl_name(name: &str) -> bool {
    let mut chars = name.chars();
    match chars.next() {
        None => true,
        Some(c) if c.is_ascii_alphabetic() || c == '_' => {
            chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        }
        Some(_) => false,
    }
}

/// The `aclspec` parameter, checked against HDFS's domain.
fn acl_spec(req: &WebRequest) -> Result<Vec<pb::AclEntryProto>, WebError> {
    let spec = req.required("aclspec")?;
    spec.split(',')
        .map(parse_acl_entry)
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| {
            WebError::invalid_param(
                "aclspec",
                format!(
                    "Invalid value: \"{spec}\" does not belong to the domain {ACL_SPEC_DOMAIN}"
                ),
            )
        })
}

async fn change_acl(
    state: &Arc<NameNodeState>,
    req: &WebRequest,
    method: &str,
) -> Result<Response, WebError> {
    let src = req.path.clone();
    let _: pb::SetAclResponseProto = match method {
        "removeDefaultAcl" => {
            call(
                state,
                req,
                method,
                &pb::RemoveDefaultAclRequestProto { src },
            )
            .await?
        }
        "removeAcl" => call(state, req, method, &pb::RemoveAclRequestProto { src }).await?,
        // setAcl, modifyAclEntries and removeAclEntries share one shape.
        _ => {
            let acl_spec = acl_spec(req)?;
            call(
                state,
                req,
                method,
                &pb::SetAclRequestProto { src, acl_spec },
            )
            .await?
        }
    };
    Ok(web::ok_empty())
}

/// An `xattr.name` parameter as the wire's namespace and name.
fn xattr(name: &str, value: Option<Vec<u8>>) -> Result<pb::XAttrProto, WebError> {
    let (namespace, name) = xattr_codec::parse_name(name)
        .map_err(|m| WebError::new(web::HADOOP_ILLEGAL_ARGUMENT, m))?;
    Ok(pb::XAttrProto {
        namespace,
        name,
        value: value.map(bytes::Bytes::from),
    })
}

async fn get_xattrs(state: &Arc<NameNodeState>, req: &WebRequest) -> Result<Response, WebError> {
    let encoding_text = req.required("encoding")?;
    let encoding = Encoding::parse(encoding_text).ok_or_else(|| {
        WebError::invalid_param(
            "encoding",
            format!(
                "No enum constant org.apache.hadoop.fs.XAttrCodec.{}",
                encoding_text.to_ascii_uppercase()
            ),
        )
    })?;
    let wanted = req
        .params
        .all("xattr.name")
        .into_iter()
        .filter(|n| !n.is_empty())
        .map(|n| xattr(n, None))
        .collect::<Result<Vec<_>, _>>()?;
    let r: pb::GetXAttrsResponseProto = call(
        state,
        req,
        "getXAttrs",
        &pb::GetXAttrsRequestProto {
            src: req.path.clone(),
            x_attrs: wanted,
        },
    )
    .await?;
    let list: Vec<serde_json::Value> = r
        .x_attrs
        .iter()
        .map(|x| {
            let value = x
                .value
                .as_ref()
                .filter(|v| !v.is_empty())
                .map(|v| xattr_codec::encode_value(v, encoding));
            json!({"name": json::xattr_name(x), "value": value})
        })
        .collect();
    Ok(ok_json("XAttrs", json!(list)))
}

async fn list_xattrs(state: &Arc<NameNodeState>, req: &WebRequest) -> Result<Response, WebError> {
    let r: pb::ListXAttrsResponseProto = call(
        state,
        req,
        "listXAttrs",
        &pb::ListXAttrsRequestProto {
            src: req.path.clone(),
        },
    )
    .await?;
    let names: Vec<String> = r.x_attrs.iter().map(json::xattr_name).collect();
    // HDFS writes the names as a JSON array inside a string.
    Ok(ok_json("XAttrNames", json!(json!(names).to_string())))
}

/// `flag`: a comma list of CREATE and REPLACE.
fn xattr_flags(req: &WebRequest) -> Result<u32, WebError> {
    let mut flags = 0;
    for f in req.required("flag")?.split(',').map(str::trim) {
        flags |= match f.to_ascii_uppercase().as_str() {
            "CREATE" => XATTR_CREATE,
            "REPLACE" => XATTR_REPLACE,
            other => {
                return Err(WebError::invalid_param(
                    "flag",
                    format!("No enum constant org.apache.hadoop.fs.XAttrSetFlag.{other}"),
                ))
            }
        };
    }
    Ok(flags)
}

async fn set_xattr(state: &Arc<NameNodeState>, req: &WebRequest) -> Result<Response, WebError> {
    let name = req.required("xattr.name")?;
    let value = match req.params.string("xattr.value") {
        Some(v) => Some(xattr_codec::decode_value(v).map_err(WebError::io)?),
        None => None,
    };
    let flag = xattr_flags(req)?;
    let x = xattr(name, value)?;
    let _: pb::SetXAttrResponseProto = call(
        state,
        req,
        "setXAttr",
        &pb::SetXAttrRequestProto {
            src: req.path.clone(),
            x_attr: Some(x),
            flag: Some(flag),
        },
    )
    .await?;
    Ok(web::ok_empty())
}

async fn remove_xattr(state: &Arc<NameNodeState>, req: &WebRequest) -> Result<Response, WebError> {
    let x = xattr(req.required("xattr.name")?, None)?;
    let _: pb::RemoveXAttrResponseProto = call(
        state,
        req,
        "removeXAttr",
        &pb::RemoveXAttrRequestProto {
            src: req.path.clone(),
            x_attr: Some(x),
        },
    )
    .await?;
    Ok(web::ok_empty())
}
