//! Hosts of their own for tests that need real partitions: Linux network
//! namespaces joined to one bridge by veth pairs, so cutting a host's link
//! leaves its processes running but unreachable. Needs root (`ip netns`);
//! [`Net::new`] returns `None` where namespaces cannot be made, and the
//! test says so and stops.

use std::process::Command;

/// Runs `ip ARGS`; true when it succeeded.
pub fn ip(args: &[&str]) -> bool {
    Command::new("ip")
        .args(args)
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// A bridge, namespaces and veth pairs, removed on drop.
pub struct Net {
    id: u32,
    /// The first three octets of the hosts' addresses (`10.x.y`).
    pub subnet: String,
    /// The namespaces' names, for `ip netns exec`.
    pub hosts: Vec<String>,
}

impl Net {
    pub fn new(hosts: usize) -> Option<Net> {
        let id = std::process::id() % 9000 + 1000;
        let subnet = format!("10.{}.{}", 100 + id % 100, id / 100 % 250);
        let net = Net {
            id,
            subnet,
            hosts: Vec::new(),
        };
        let br = net.bridge();
        if !(ip(&["link", "add", &br, "type", "bridge"])
            && ip(&["addr", "add", &format!("{}.1/24", net.subnet), "dev", &br])
            && ip(&["link", "set", &br, "up"]))
        {
            return None;
        }
        let mut net = net;
        for i in 0..hosts {
            let ns = format!("cns{}-{i}", net.id);
            let (v, p) = (format!("cv{}{i}", net.id), format!("cp{}{i}", net.id));
            let addr = format!("{}.{}", net.subnet, 10 + i);
            let ok = ip(&["netns", "add", &ns])
                && ip(&["link", "add", &v, "type", "veth", "peer", "name", &p])
                && ip(&["link", "set", &p, "netns", &ns])
                && ip(&["link", "set", &v, "master", &br, "up"])
                && ip(&[
                    "netns",
                    "exec",
                    &ns,
                    "ip",
                    "addr",
                    "add",
                    &format!("{addr}/24"),
                    "dev",
                    &p,
                ])
                && ip(&["netns", "exec", &ns, "ip", "link", "set", &p, "up"])
                && ip(&["netns", "exec", &ns, "ip", "link", "set", "lo", "up"]);
            net.hosts.push(ns);
            if !ok {
                return None;
            }
        }
        Some(net)
    }

    pub fn bridge(&self) -> String {
        format!("cbr{}", self.id)
    }

    pub fn gateway(&self) -> String {
        format!("{}.1", self.subnet)
    }

    pub fn addr(&self, i: usize) -> String {
        format!("{}.{}", self.subnet, 10 + i)
    }

    /// Cuts (or restores) host `i`'s link to the bridge.
    pub fn link(&self, i: usize, up: bool) {
        assert!(ip(&[
            "link",
            "set",
            &format!("cv{}{i}", self.id),
            if up { "up" } else { "down" }
        ]));
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        for (i, ns) in self.hosts.iter().enumerate() {
            let _ = ip(&["link", "del", &format!("cv{}{i}", self.id)]);
            let _ = ip(&["netns", "del", ns]);
        }
        let _ = ip(&["link", "del", &self.bridge()]);
    }
}
