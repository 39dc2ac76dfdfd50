//! `-p`: the attributes a copy carries from its source to its target.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::super::shell::Shell;
use super::super::transfer::io_reason;
use super::node::{Meta, Node, Place};
use super::Copier;

/// Which attributes `-p` keeps.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Preserve {
    pub(super) times: bool,
    pub(super) ownership: bool,
    pub(super) permission: bool,
    pub(super) acl: bool,
}

/// Hadoop's `preserveAttributes`: times, then owner and group, then
/// permission (and ACL entries with `-pa`), from `src` onto `target`.
pub(super) async fn preserve_attributes(
    shell: &mut Shell,
    copier: &Copier,
    src: &Node,
    target: &Node,
) {
    let p = copier.preserve;
    let Some(meta) = &src.meta else {
        return;
    };
    if !(p.times || p.ownership || p.permission || p.acl) {
        return;
    }
    let result = match &target.place {
        Place::Local(path) => preserve_local(path, meta, p),
        Place::Remote(fs, path) => {
            let Some(client) = shell.client(*fs) else {
                return;
            };
            let mut result = Ok(());
            if p.times {
                result = client.set_times(path, meta.mtime, meta.atime).await;
            }
            if p.ownership && result.is_ok() {
                result = client
                    .set_owner(path, Some(&meta.owner), Some(&meta.group))
                    .await;
            }
            if (p.permission || p.acl) && result.is_ok() {
                result = client.set_permission(path, meta.permission).await;
            }
            if p.acl && result.is_ok() {
                if let Place::Remote(src_fs, src_path) = &src.place {
                    if let Some(src_client) = shell.client(*src_fs) {
                        result = match src_client.get_acl_status(src_path).await {
                            Ok(acl) if !acl.entries.is_empty() => {
                                client.set_acl(path, acl.entries).await
                            }
                            Ok(_) => Ok(()),
                            Err(e) => Err(e),
                        };
                    }
                }
            }
            result.map_err(|e| shell.describe(&e, &target.display, *fs))
        }
    };
    if let Err(message) = result {
        shell.error(&message);
    }
}

fn preserve_local(path: &Path, meta: &Meta, p: Preserve) -> Result<(), String> {
    let fail = |e: std::io::Error| format!("{} ({})", path.display(), io_reason(&e));
    if p.times {
        let at = |ms: u64| std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms);
        let times = std::fs::FileTimes::new()
            .set_modified(at(meta.mtime))
            .set_accessed(at(meta.atime));
        std::fs::File::options()
            .read(true)
            .open(path)
            .and_then(|f| f.set_times(times))
            .map_err(fail)?;
    }
    if p.ownership {
        let uid = nix::unistd::User::from_name(&meta.owner)
            .ok()
            .flatten()
            .map(|u| u.uid.as_raw());
        let gid = nix::unistd::Group::from_name(&meta.group)
            .ok()
            .flatten()
            .map(|g| g.gid.as_raw());
        if uid.is_none() && gid.is_none() {
            return Err(format!(
                "chown: invalid user: '{}:{}'",
                meta.owner, meta.group
            ));
        }
        std::os::unix::fs::chown(path, uid, gid).map_err(fail)?;
    }
    if p.permission {
        std::fs::set_permissions(
            path,
            std::fs::Permissions::from_mode(meta.permission & 0o7777),
        )
        .map_err(fail)?;
    }
    Ok(())
}
