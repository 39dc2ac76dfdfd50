//! `ClientProtocol`'s extended-attribute calls: `setXAttr`, `getXAttrs`,
//! `listXAttrs`, `removeXAttr`. The rules live in `namespace::xattrs`; this
//! is the wire side (XAttrProto ⇄ [`XAttr`]).

use std::sync::Arc;

use cairn_proto::hadoop::hdfs as pb;

use super::convert::encode;
use super::{CallResult, NameNodeState};
use crate::namespace::permission::Caller;
use crate::namespace::{XAttr, XAttrNamespace, XAttrSetFlags};
use cairn_rpc::CallError;

fn from_proto(p: &pb::XAttrProto) -> Result<XAttr, CallError> {
    let namespace = u32::try_from(p.namespace)
        .ok()
        .and_then(XAttrNamespace::from_number)
        .ok_or_else(|| CallError::BadRequest(format!("unknown xattr namespace {}", p.namespace)))?;
    Ok(XAttr {
        namespace,
        name: p.name.clone(),
        value: p.value.as_ref().map(|v| v.to_vec()),
    })
}

fn to_proto(x: XAttr) -> pb::XAttrProto {
    pb::XAttrProto {
        namespace: i32::try_from(x.namespace.number()).unwrap_or_default(),
        name: x.name,
        value: x.value.map(Into::into),
    }
}

fn required(x: Option<&pb::XAttrProto>) -> Result<XAttr, CallError> {
    from_proto(x.ok_or_else(|| CallError::BadRequest("the request names no xattr".into()))?)
}

impl NameNodeState {
    /// `setXAttr`.
    pub(super) async fn set_xattr(
        self: &Arc<Self>,
        caller: &Caller,
        r: pb::SetXAttrRequestProto,
    ) -> CallResult {
        let xattr = required(r.x_attr.as_ref())?;
        let flags = XAttrSetFlags::from_bits(r.flag.unwrap_or(0));
        self.mutate(
            || format!("set xattr on {}", r.src),
            |ns| Ok(((), vec![ns.set_xattr(caller, &r.src, xattr, flags)?])),
        )
        .await?;
        encode(&pb::SetXAttrResponseProto {})
    }

    /// `getXAttrs`.
    pub(super) fn get_xattrs(&self, caller: &Caller, r: pb::GetXAttrsRequestProto) -> CallResult {
        let names = r
            .x_attrs
            .iter()
            .map(from_proto)
            .collect::<Result<Vec<_>, _>>()?;
        let found = self.read(|ns| ns.get_xattrs(caller, &r.src, &names))?;
        encode(&pb::GetXAttrsResponseProto {
            x_attrs: found.into_iter().map(to_proto).collect(),
        })
    }

    /// `listXAttrs`.
    pub(super) fn list_xattrs(&self, caller: &Caller, r: pb::ListXAttrsRequestProto) -> CallResult {
        let names = self.read(|ns| ns.list_xattrs(caller, &r.src))?;
        encode(&pb::ListXAttrsResponseProto {
            x_attrs: names.into_iter().map(to_proto).collect(),
        })
    }

    /// `removeXAttr`.
    pub(super) async fn remove_xattr(
        self: &Arc<Self>,
        caller: &Caller,
        r: pb::RemoveXAttrRequestProto,
    ) -> CallResult {
        let xattr = required(r.x_attr.as_ref())?;
        self.mutate(
            || format!("remove xattr from {}", r.src),
            |ns| Ok(((), vec![ns.remove_xattr(caller, &r.src, &xattr)?])),
        )
        .await?;
        encode(&pb::RemoveXAttrResponseProto {})
    }
}
