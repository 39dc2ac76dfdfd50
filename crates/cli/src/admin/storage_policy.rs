//! `cairn admin -listPolicies | -setStoragePolicy -path P -policy N |
//! -getStoragePolicy -path P | -unsetStoragePolicy -path P`, as `hdfs
//! storagepolicies` (Hadoop's `StoragePolicyAdmin`) runs them: the same
//! lines on stdout, errors on stderr as the Java tool words them (the
//! exception's simple name where DFSClient unwraps it, `RemoteException`
//! where it does not), and its exit codes (1 for usage, 2 for a failure).

use cairn_common::storage_type::StorageType;
use cairn_proto::hadoop::hdfs as pb;
use cairn_rpc::client::{Client, ClientError};

/// The commands this file serves.
pub(crate) fn is_command(cmd: &str) -> bool {
    matches!(
        cmd,
        "-listPolicies" | "-setStoragePolicy" | "-getStoragePolicy" | "-unsetStoragePolicy"
    )
}

/// Runs `cmd` with its `args`; the process exit code.
pub(crate) async fn run(client: &Client, cmd: &str, mut args: Vec<String>) -> i32 {
    let result = match cmd {
        "-listPolicies" => list(client).await,
        "-setStoragePolicy" => set(client, &mut args).await,
        "-getStoragePolicy" => get(client, &mut args).await,
        _ => unset(client, &mut args).await,
    };
    match result {
        Ok(code) => code,
        Err(ArgError(message)) => {
            // The tool's catch of IllegalArgumentException: exit -1.
            eprintln!("IllegalArgumentException: {message}");
            255
        }
    }
}

/// An option given without its value (`StringUtils.popOptionWithArgument`).
struct ArgError(String);

/// Takes `name` and its value out of `args` (nothing after `--`).
fn pop_option(name: &str, args: &mut Vec<String>) -> Result<Option<String>, ArgError> {
    let end = args.iter().position(|a| a == "--").unwrap_or(args.len());
    let Some(i) = args[..end].iter().position(|a| a == name) else {
        return Ok(None);
    };
    args.remove(i);
    if i >= args.len() {
        return Err(ArgError(format!("option {name} requires 1 argument.")));
    }
    Ok(Some(args.remove(i)))
}

/// The failure of a call as the tool prints it (`prettifyException`):
/// DFSClient rethrows the classes in `unwrapped` as themselves, anything
/// else stays a `RemoteException`.
fn pretty(e: &ClientError, unwrapped: &[&str]) -> String {
    let (class, message) = match e {
        ClientError::Remote { class, message } | ClientError::Fatal { class, message } => {
            (class.as_str(), message.as_str())
        }
        other => return format!("IOException: {other}"),
    };
    let simple = class.rsplit('.').next().unwrap_or(class);
    let shown = if unwrapped.contains(&simple) {
        simple
    } else {
        "RemoteException"
    };
    format!("{shown}: {}", message.lines().next().unwrap_or_default())
}

/// What DFSClient unwraps for setStoragePolicy and unsetStoragePolicy.
const SET_UNWRAPPED: &[&str] = &[
    "AccessControlException",
    "FileNotFoundException",
    "SafeModeException",
    "NSQuotaExceededException",
    "UnresolvedPathException",
    "SnapshotAccessControlException",
];

/// What DFSClient unwraps for getFileInfo.
const INFO_UNWRAPPED: &[&str] = &[
    "AccessControlException",
    "FileNotFoundException",
    "UnresolvedPathException",
];

/// Java's `BlockStoragePolicy.toString`.
fn policy_text(p: &pb::BlockStoragePolicyProto) -> String {
    let list = |types: Option<&pb::StorageTypesProto>| {
        types
            .map(|t| {
                t.storage_types
                    .iter()
                    .map(|n| StorageType::from_proto(*n).map_or("?", StorageType::name))
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default()
    };
    format!(
        "BlockStoragePolicy{{{}:{}, storageTypes=[{}], creationFallbacks=[{}], replicationFallbacks=[{}]}}",
        p.name,
        p.policy_id,
        list(Some(&p.creation_policy)),
        list(p.creation_fallback_policy.as_ref()),
        list(p.replication_fallback_policy.as_ref())
    )
}

async fn policies(client: &Client) -> Result<Vec<pb::BlockStoragePolicyProto>, ClientError> {
    let r: pb::GetStoragePoliciesResponseProto = client
        .call("getStoragePolicies", &pb::GetStoragePoliciesRequestProto {})
        .await?;
    Ok(r.policies)
}

async fn list(client: &Client) -> Result<i32, ArgError> {
    match policies(client).await {
        Ok(all) => {
            println!("Block Storage Policies:");
            for p in &all {
                println!("\t{}", policy_text(p));
            }
            Ok(0)
        }
        Err(e) => {
            eprintln!("{}", pretty(&e, &[]));
            Ok(2)
        }
    }
}

/// Hadoop's `TableListing` of option descriptions as the tool builds it
/// (two columns, each as wide as its longest entry plus one, a space
/// between, the second wrapped so a line fits 80 columns).
fn option_table(rows: &[(&str, &str)]) -> String {
    let first = rows.iter().map(|(a, _)| a.len() + 1).max().unwrap_or(1);
    let mut second = rows.iter().map(|(_, b)| b.len() + 1).max().unwrap_or(1);
    while first + second + 2 > 80 && second > 10 {
        second -= 1;
    }
    let mut out = String::new();
    for (option, text) in rows {
        for (k, line) in wrap(text, second).iter().enumerate() {
            let head = if k == 0 { *option } else { "" };
            out.push_str(&format!("{head:<first$} {line:<second$}\n"));
        }
    }
    out
}

/// Greedy word wrap to lines of at most `width` characters.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for word in text.split(' ') {
        if !cur.is_empty() && cur.len() + 1 + word.len() > width {
            lines.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(word);
    }
    lines.push(cur);
    lines
}

fn set_usage() -> String {
    format!(
        "[-setStoragePolicy -path <path> -policy <policy>]\n\nSet the storage policy to a file/directory.\n\n{}",
        option_table(&[
            (
                "<path>",
                "The path of the file/directory to set storage policy"
            ),
            ("<policy>", "The name of the block storage policy"),
        ])
    )
}

async fn set(client: &Client, args: &mut Vec<String>) -> Result<i32, ArgError> {
    let Some(path) = pop_option("-path", args)? else {
        eprintln!(
            "Please specify the path for setting the storage policy.\nUsage: {}",
            set_usage()
        );
        return Ok(1);
    };
    let Some(policy) = pop_option("-policy", args)? else {
        eprintln!("Please specify the policy name.\nUsage: {}", set_usage());
        return Ok(1);
    };
    let r = client
        .call::<_, pb::SetStoragePolicyResponseProto>(
            "setStoragePolicy",
            &pb::SetStoragePolicyRequestProto {
                src: path.clone(),
                policy_name: policy.clone(),
            },
        )
        .await;
    Ok(match r {
        Ok(_) => {
            println!("Set storage policy {policy} on {path}");
            0
        }
        Err(e) => {
            eprintln!("{}", pretty(&e, SET_UNWRAPPED));
            2
        }
    })
}

async fn get(client: &Client, args: &mut Vec<String>) -> Result<i32, ArgError> {
    let Some(path) = pop_option("-path", args)? else {
        eprintln!(
            "Please specify the path with -path.\nUsage: [-getStoragePolicy -path <path>]\n\nGet the storage policy of a file/directory.\n\n{}",
            option_table(&[(
                "<path>",
                "The path of the file/directory for getting the storage policy"
            )])
        );
        return Ok(1);
    };
    let info = client
        .call::<_, pb::GetFileInfoResponseProto>(
            "getFileInfo",
            &pb::GetFileInfoRequestProto { src: path.clone() },
        )
        .await;
    let status = match info {
        Ok(r) => r.fs,
        Err(e) => {
            eprintln!("{}", pretty(&e, INFO_UNWRAPPED));
            return Ok(2);
        }
    };
    let Some(status) = status else {
        eprintln!("File/Directory does not exist: {path}");
        return Ok(2);
    };
    let id = status.storage_policy.unwrap_or(0);
    if id == 0 {
        println!("The storage policy of {path} is unspecified");
        return Ok(0);
    }
    match policies(client).await {
        Ok(all) => {
            if let Some(p) = all.iter().find(|p| p.policy_id == id) {
                println!("The storage policy of {path}:\n{}", policy_text(p));
                return Ok(0);
            }
        }
        Err(e) => {
            eprintln!("{}", pretty(&e, &[]));
            return Ok(2);
        }
    }
    eprintln!("Cannot identify the storage policy for {path}");
    Ok(2)
}

async fn unset(client: &Client, args: &mut Vec<String>) -> Result<i32, ArgError> {
    let Some(path) = pop_option("-path", args)? else {
        // "unsetd": the tool's own spelling.
        eprintln!(
            "Please specify the path from which the storage policy will be unsetd.\nUsage: [-unsetStoragePolicy -path <path>]\n\nUnset the storage policy set for a file/directory.\n\n{}",
            option_table(&[(
                "<path>",
                "The path of the file/directory from which the storage policy will be unset."
            )])
        );
        return Ok(1);
    };
    let r = client
        .call::<_, pb::UnsetStoragePolicyResponseProto>(
            "unsetStoragePolicy",
            &pb::UnsetStoragePolicyRequestProto { src: path.clone() },
        )
        .await;
    Ok(match r {
        Ok(_) => {
            println!("Unset storage policy from {path}");
            0
        }
        Err(e) => {
            eprintln!("{}", pretty(&e, SET_UNWRAPPED));
            2
        }
    })
}
