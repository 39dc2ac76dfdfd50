//! ACL entries and the rules that combine them, as HDFS's
//! `AclTransformation` applies them: merge (`modifyAclEntries`), filter
//! by a spec (`removeAclEntries`), drop the default ACL
//! (`removeDefaultAcl`) and replace (`setAcl`); each recalculates the mask
//! where HDFS does, copies the base entries into a new default ACL, and
//! validates the result with HDFS's messages and its limit of 32 entries
//! per scope. Everything here is pure: lists of entries in, a list out.
//! Where the result is kept, and what it changes on the inode, is
//! `acl_storage.rs`.

use std::fmt;

/// Most entries per scope (access, default), as HDFS's `MAX_ENTRIES`.
pub const MAX_ENTRIES: usize = 32;

/// An entry's scope; access entries sort before default ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AclScope {
    Access,
    Default,
}

impl AclScope {
    /// The `AclEntryScopeProto` number.
    pub fn number(self) -> i32 {
        match self {
            AclScope::Access => 0,
            AclScope::Default => 1,
        }
    }

    pub fn from_number(n: i32) -> Option<Self> {
        match n {
            0 => Some(AclScope::Access),
            1 => Some(AclScope::Default),
            _ => None,
        }
    }

    fn index(self) -> usize {
        match self {
            AclScope::Access => 0,
            AclScope::Default => 1,
        }
    }
}

/// An entry's type, in HDFS's sort order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AclEntryType {
    User,
    Group,
    Mask,
    Other,
}

impl AclEntryType {
    /// The `AclEntryTypeProto` number.
    pub fn number(self) -> i32 {
        match self {
            AclEntryType::User => 0,
            AclEntryType::Group => 1,
            AclEntryType::Mask => 2,
            AclEntryType::Other => 3,
        }
    }

    pub fn from_number(n: i32) -> Option<Self> {
        Some(match n {
            0 => AclEntryType::User,
            1 => AclEntryType::Group,
            2 => AclEntryType::Mask,
            3 => AclEntryType::Other,
            _ => return None,
        })
    }

    fn word(self) -> &'static str {
        match self {
            AclEntryType::User => "user",
            AclEntryType::Group => "group",
            AclEntryType::Mask => "mask",
            AclEntryType::Other => "other",
        }
    }
}

/// One ACL entry: `[default:]type:[name]:rwx`. `permission` holds the
/// three rwx bits.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AclEntry {
    pub scope: AclScope,
    pub kind: AclEntryType,
    pub name: Option<String>,
    pub permission: u16,
}

impl AclEntry {
    pub fn new(scope: AclScope, kind: AclEntryType, name: Option<&str>, permission: u16) -> Self {
        Self {
            scope,
            kind,
            name: name.map(str::to_string),
            permission: permission & 7,
        }
    }

    /// HDFS's sort key: scope, type, then name with the unnamed entry first.
    fn key(&self) -> (AclScope, AclEntryType, Option<&str>) {
        (self.scope, self.kind, self.name.as_deref())
    }

    fn same_key(&self, other: &AclEntry) -> bool {
        self.key() == other.key()
    }

    fn with_scope(&self, scope: AclScope) -> AclEntry {
        AclEntry {
            scope,
            ..self.clone()
        }
    }
}

impl fmt::Display for AclEntry {
    /// Java's `AclEntry.toString`: `default:user:bob:rwx`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.scope == AclScope::Default {
            f.write_str("default:")?;
        }
        let p = self.permission;
        let bit = |mask: u16, c: char| if p & mask != 0 { c } else { '-' };
        write!(
            f,
            "{}:{}:{}{}{}",
            self.kind.word(),
            self.name.as_deref().unwrap_or(""),
            bit(4, 'r'),
            bit(2, 'w'),
            bit(1, 'x')
        )
    }
}

/// Sorts entries into HDFS's order (stable, as Java's `Collections.sort`).
pub fn sort_entries(entries: &mut [AclEntry]) {
    entries.sort_by(|a, b| a.key().cmp(&b.key()));
}

/// The unnamed entry of `kind` in `scope`, if any.
pub(super) fn base_entry(
    entries: &[AclEntry],
    scope: AclScope,
    kind: AclEntryType,
) -> Option<&AclEntry> {
    entries
        .iter()
        .find(|e| e.scope == scope && e.kind == kind && e.name.is_none())
}

/// Entries split at the first default one (HDFS's `ScopedAclEntries`).
pub(super) fn split_scopes(entries: &[AclEntry]) -> (&[AclEntry], &[AclEntry]) {
    let first_default = entries
        .iter()
        .position(|e| e.scope == AclScope::Default)
        .unwrap_or(entries.len());
    entries.split_at(first_default)
}

/// The three-entry ACL that permission bits imply.
pub(super) fn minimal_acl(permission: u16) -> Vec<AclEntry> {
    vec![
        AclEntry::new(AclScope::Access, AclEntryType::User, None, permission >> 6),
        AclEntry::new(AclScope::Access, AclEntryType::Group, None, permission >> 3),
        AclEntry::new(AclScope::Access, AclEntryType::Other, None, permission),
    ]
}

/// A mask per scope, and which scopes a change touched.
#[derive(Default)]
struct MaskState {
    provided: [Option<AclEntry>; 2],
    mask_dirty: [bool; 2],
    scope_dirty: [bool; 2],
}

impl MaskState {
    /// Takes `entry` from a spec: a mask is remembered as given, any other
    /// entry goes to `builder`; its scope is now changed.
    fn take_from_spec(&mut self, entry: &AclEntry, builder: &mut Vec<AclEntry>) {
        let s = entry.scope.index();
        self.scope_dirty[s] = true;
        if entry.kind == AclEntryType::Mask {
            self.provided[s] = Some(entry.clone());
            self.mask_dirty[s] = true;
        } else {
            builder.push(entry.clone());
        }
    }

    /// Keeps an existing entry unchanged.
    fn keep(&mut self, entry: &AclEntry, builder: &mut Vec<AclEntry>) {
        if entry.kind == AclEntryType::Mask {
            self.provided[entry.scope.index()] = Some(entry.clone());
        } else {
            builder.push(entry.clone());
        }
    }
}

/// A spec sorted and checked against the entry limit (HDFS's
/// `ValidatedAclSpec`).
fn validated_spec(spec: &[AclEntry]) -> Result<Vec<AclEntry>, String> {
    let mut spec = spec.to_vec();
    sort_entries(&mut spec);
    check_max_entries(&spec)?;
    Ok(spec)
}

fn find_by_key<'a>(spec: &'a [AclEntry], entry: &AclEntry) -> Option<&'a AclEntry> {
    spec.iter().find(|s| s.same_key(entry))
}

fn check_max_entries(entries: &[AclEntry]) -> Result<(), String> {
    let (access, default) = split_scopes(entries);
    for (list, what) in [(access, "access"), (default, "default")] {
        if list.len() > MAX_ENTRIES {
            return Err(format!(
                "Invalid ACL: ACL has {} {what} entries, which exceeds maximum of {MAX_ENTRIES}.",
                list.len()
            ));
        }
    }
    Ok(())
}

/// modifyAclEntries: spec entries replace existing entries of the same
/// key, or are added.
///
/// # Errors
/// HDFS's "Invalid ACL: ..." messages.
pub fn merge_entries(existing: &[AclEntry], spec: &[AclEntry]) -> Result<Vec<AclEntry>, String> {
    let spec = validated_spec(spec)?;
    let mut builder = Vec::with_capacity(existing.len() + spec.len());
    let mut found: Vec<&AclEntry> = Vec::new();
    let mut masks = MaskState::default();
    for entry in existing {
        match find_by_key(&spec, entry) {
            Some(replacement) => {
                found.push(replacement);
                masks.take_from_spec(replacement, &mut builder);
            }
            None => masks.keep(entry, &mut builder),
        }
    }
    for entry in &spec {
        if !found.iter().any(|f| f.same_key(entry)) {
            masks.take_from_spec(entry, &mut builder);
        }
    }
    finish(builder, &masks)
}

/// removeAclEntries: existing entries whose key the spec names go.
///
/// # Errors
/// HDFS's "Invalid ACL: ..." messages (e.g. removing a required mask).
pub fn filter_by_spec(existing: &[AclEntry], spec: &[AclEntry]) -> Result<Vec<AclEntry>, String> {
    let spec = validated_spec(spec)?;
    let mut builder = Vec::with_capacity(existing.len());
    let mut masks = MaskState::default();
    for entry in existing {
        if find_by_key(&spec, entry).is_some() {
            let s = entry.scope.index();
            masks.scope_dirty[s] = true;
            if entry.kind == AclEntryType::Mask {
                masks.mask_dirty[s] = true;
            }
        } else {
            masks.keep(entry, &mut builder);
        }
    }
    finish(builder, &masks)
}

/// removeDefaultAcl: only the access entries stay.
///
/// # Errors
/// HDFS's validation messages (not expected for a valid existing ACL).
pub fn filter_default_entries(existing: &[AclEntry]) -> Result<Vec<AclEntry>, String> {
    let (access, _) = split_scopes(existing);
    build_and_validate(access.to_vec())
}

/// setAcl: each scope the spec names is replaced whole; the other scope
/// stays.
///
/// # Errors
/// HDFS's "Invalid ACL: ..." messages.
pub fn replace_entries(existing: &[AclEntry], spec: &[AclEntry]) -> Result<Vec<AclEntry>, String> {
    let spec = validated_spec(spec)?;
    let mut builder = Vec::with_capacity(existing.len() + spec.len());
    let mut masks = MaskState::default();
    for entry in &spec {
        masks.take_from_spec(entry, &mut builder);
    }
    for entry in existing {
        if !masks.scope_dirty[entry.scope.index()] {
            masks.keep(entry, &mut builder);
        }
    }
    finish(builder, &masks)
}

fn finish(mut builder: Vec<AclEntry>, masks: &MaskState) -> Result<Vec<AclEntry>, String> {
    copy_defaults_if_needed(&mut builder);
    calculate_masks(&mut builder, masks)?;
    build_and_validate(builder)
}

/// A default ACL missing its owner, group or other entry takes it from
/// the access ACL.
fn copy_defaults_if_needed(builder: &mut Vec<AclEntry>) {
    sort_entries(builder);
    let (access, default) = split_scopes(builder);
    if default.is_empty() {
        return;
    }
    let mut copied = Vec::new();
    for kind in [AclEntryType::User, AclEntryType::Group, AclEntryType::Other] {
        if base_entry(default, AclScope::Default, kind).is_none() {
            if let Some(a) = base_entry(access, AclScope::Access, kind) {
                copied.push(a.with_scope(AclScope::Default));
            }
        }
    }
    builder.extend(copied);
}

/// Adds each scope's mask: the one given, the one kept, or the union of
/// the group class (named entries and the unnamed group) where a mask is
/// needed or was there before.
fn calculate_masks(builder: &mut Vec<AclEntry>, masks: &MaskState) -> Result<(), String> {
    let mut found = [false; 2];
    let mut union = [0u16; 2];
    let mut needed = [false; 2];
    for e in builder.iter() {
        let s = e.scope.index();
        found[s] = true;
        if e.kind == AclEntryType::Group || e.name.is_some() {
            union[s] |= e.permission;
        }
        if e.name.is_some() {
            needed[s] = true;
        }
    }
    for scope in [AclScope::Access, AclScope::Default] {
        let s = scope.index();
        if !found[s] {
            continue;
        }
        let provided = &masks.provided[s];
        if provided.is_none() && needed[s] && masks.mask_dirty[s] {
            return Err("Invalid ACL: mask is required and cannot be deleted.".into());
        }
        match provided {
            Some(mask) if !masks.scope_dirty[s] || masks.mask_dirty[s] => {
                builder.push(mask.clone());
            }
            _ if needed[s] || provided.is_some() => {
                builder.push(AclEntry::new(scope, AclEntryType::Mask, None, union[s]));
            }
            _ => {}
        }
    }
    Ok(())
}

/// Sorts and validates a finished ACL: no duplicate keys, no named mask or
/// other, the limit, and the base entries of each scope present.
fn build_and_validate(mut builder: Vec<AclEntry>) -> Result<Vec<AclEntry>, String> {
    sort_entries(&mut builder);
    for (i, e) in builder.iter().enumerate() {
        if i > 0 && builder[i - 1].same_key(e) {
            return Err("Invalid ACL: multiple entries with same scope, type and name.".into());
        }
        if e.name.is_some() && matches!(e.kind, AclEntryType::Mask | AclEntryType::Other) {
            return Err(format!(
                "Invalid ACL: this entry type must not have a name: {e}."
            ));
        }
    }
    check_max_entries(&builder)?;
    let (access, default) = split_scopes(&builder);
    for kind in [AclEntryType::User, AclEntryType::Group, AclEntryType::Other] {
        if base_entry(access, AclScope::Access, kind).is_none() {
            return Err("Invalid ACL: the user, group and other entries are required.".into());
        }
        if !default.is_empty() && base_entry(default, AclScope::Default, kind).is_none() {
            return Err(
                "Invalid default ACL: the user, group and other entries are required.".into(),
            );
        }
    }
    Ok(builder)
}
