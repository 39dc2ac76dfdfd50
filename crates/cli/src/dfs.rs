//! `cairn dfs`: placeholder until the shell lands.

use cairn_common::config::Configuration;

pub async fn run(_conf: Configuration, _args: Vec<String>) -> i32 {
    eprintln!("dfs: not built yet");
    1
}
