//! `cairn dfs -expunge`: the trash root emptied as Hadoop's shell does it.

use super::*;

#[test]
fn expunge_deletes_old_checkpoints_and_checkpoints_current() {
    // Goal: -expunge as Hadoop's shell runs it on the user's trash root:
    // checkpoints older than the client's fs.trash.interval deleted, a
    // younger one kept, an entry that is no checkpoint moved into Current,
    // Current renamed to a checkpoint of the local time; -immediate then
    // deletes every checkpoint; TrashPolicyDefault's log lines on standard
    // error; no trash root, nothing to do.
    let nn = Cluster::start();
    nn.dfs(&["-expunge"]).assert_ok();
    let trash = format!("/user/{}/.Trash", common::current_user());
    let young = (chrono::Local::now() + chrono::Duration::days(1))
        .format("%y%m%d%H%M%S")
        .to_string();
    for dir in ["Current/x", "200101000000/y", &young, "junk"] {
        nn.dfs(&["-mkdir", "-p", &format!("{trash}/{dir}")])
            .assert_ok();
    }
    let q = |p: &str| format!("{}{p}", nn.url);
    let out = nn.dfs(&["-D", "fs.trash.interval=60", "-expunge"]);
    let lines: Vec<&str> = out.stderr.lines().collect();
    let delete_for = format!(
        "TrashPolicyDefault#deleteCheckpoint for trashRoot: {}",
        q(&trash)
    );
    let junk = format!("{trash}/junk");
    let want = [
        delete_for.clone(),
        delete_for.clone(),
        format!("Deleted trash checkpoint: {trash}/200101000000"),
        format!(
            "Moved: '{}' to trash at: {}",
            q(&junk),
            q(&format!("{trash}/Current{junk}"))
        ),
        format!("Unexpected item in trash: {junk}. Force moving to trash."),
        format!(
            "TrashPolicyDefault#createCheckpoint for trashRoot: {}",
            q(&trash)
        ),
    ];
    let got: Vec<String> = lines[..lines.len() - 1]
        .iter()
        .map(|l| l.to_string())
        .collect();
    assert_eq!((out.code, &got[..]), (0, &want[..]), "{out:#?}");
    let created = lines[lines.len() - 1]
        .strip_prefix(&format!("Created trash checkpoint: {trash}/"))
        .unwrap_or_else(|| panic!("{out:#?}"))
        .to_string();
    let stamp = chrono::NaiveDateTime::parse_from_str(&created, "%y%m%d%H%M%S").expect("a time");
    let age = chrono::Local::now().naive_local() - stamp;
    assert!(age.num_seconds().abs() < 120, "{created}: {age}");
    let kept = format!("{trash}/{created}");
    let moved = format!("{kept}{trash}");
    let listed = [
        kept.clone(),
        format!("{kept}/user"),
        format!("{kept}/user/{}", common::current_user()),
        moved.clone(),
        format!("{moved}/junk"),
        format!("{kept}/x"),
        format!("{trash}/{young}"),
    ];
    nn.dfs(&["-ls", "-C", "-R", &trash])
        .assert(&format!("{}\n", listed.join("\n")), "", 0);
    // -immediate (here with -fs): nothing in Current, every checkpoint goes.
    let url = nn.url.clone();
    let out = nn.dfs(&["-expunge", "-immediate", "-fs", &url]);
    out.assert(
        "",
        &format!(
            "TrashPolicyDefault#createCheckpoint for trashRoot: {}\n{delete_for}\n{delete_for}\n\
             Deleted trash checkpoint: {trash}/{created}\nDeleted trash checkpoint: {trash}/{young}\n",
            q(&trash)
        ),
        0,
    );
    nn.dfs(&["-ls", "-C", &trash]).assert("", "", 0);
    let out = nn.dfs(&["-expunge", "-x"]);
    out.code_is(255);
    assert!(
        out.stderr.starts_with("-expunge: Illegal option -x\n"),
        "{out:#?}"
    );
}
