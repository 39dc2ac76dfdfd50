//! Located and batched listings over the raw ClientProtocol, where the
//! paging rules show: with locations, a `getListing` page stops once about
//! `dfs.ls.limit` block locations are in it (each file costs its blocks
//! times its replication), the cut entries count as remaining, and paging
//! on with `startAfter` gets the rest; `getBatchedListing` lists several
//! paths, reports a missing one in its own slot, and continues across
//! calls with its opaque key.

mod common;

use bytes::Bytes;
use cairn_proto::hadoop::hdfs as pb;
use cairn_proto::protocols::CLIENT_PROTOCOL;
use cairn_rpc::client::Client;
use common::{current_user, pattern, Cluster};
use hdfs_native::WriteOptions;

fn names(list: &[pb::HdfsFileStatusProto]) -> Vec<String> {
    list.iter()
        .map(|s| String::from_utf8_lossy(&s.path).into_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn location_budget_and_batched_paging() {
    // Goal: HDFS's page sizes: with dfs.ls.limit=5 and files of two blocks
    // at replication 1, a located page holds 3 files (5 → 3 → 1 → -1);
    // without locations, 5. Batched listings page across paths.
    let cluster = Cluster::start(1, &["dfs.ls.limit=5"]);
    let c = cluster.nn.client(None);
    for i in 0..6 {
        let mut w = c
            .create(
                &format!("/d/f{i}"),
                WriteOptions::default().block_size(1 << 20).replication(1),
            )
            .await
            .expect("create");
        w.write_bytes(Bytes::from(pattern(i, (1 << 20) + 1)))
            .await
            .expect("write");
        w.close().await.expect("close");
    }
    for name in ["/e/x", "/e/y"] {
        c.create(name, WriteOptions::default())
            .await
            .expect("create")
            .close()
            .await
            .expect("close");
    }
    let rpc = Client::connect(cluster.nn.addr, &current_user(), CLIENT_PROTOCOL)
        .await
        .expect("connect");
    let list = |after: &'static str, need_location: bool| {
        let rpc = &rpc;
        async move {
            let r: pb::GetListingResponseProto = rpc
                .call(
                    "getListing",
                    &pb::GetListingRequestProto {
                        src: "/d".into(),
                        start_after: Bytes::from_static(after.as_bytes()),
                        need_location,
                    },
                )
                .await
                .expect("getListing");
            r.dir_list.expect("a directory")
        }
    };
    let page = list("", true).await;
    assert_eq!(names(&page.partial_listing), ["f0", "f1", "f2"]);
    assert_eq!(page.remaining_entries, 3);
    for s in &page.partial_listing {
        let l = s.locations.as_ref().expect("located");
        assert_eq!(l.blocks.len(), 2);
        assert!(l.blocks.iter().all(|b| b.locs.len() == 1));
        assert_eq!(l.file_length, (1 << 20) + 1);
    }
    let page = list("f2", true).await;
    assert_eq!(names(&page.partial_listing), ["f3", "f4", "f5"]);
    assert_eq!(page.remaining_entries, 0);
    let page = list("", false).await;
    assert_eq!(page.partial_listing.len(), 5);
    assert!(page.partial_listing.iter().all(|s| s.locations.is_none()));
    assert_eq!(page.remaining_entries, 1);

    let paths: Vec<String> = ["/d", "/missing", "/e"].map(String::from).to_vec();
    let batch = |start_after: Bytes| {
        let rpc = &rpc;
        let paths = paths.clone();
        async move {
            let r: pb::GetBatchedListingResponseProto = rpc
                .call(
                    "getBatchedListing",
                    &pb::GetBatchedListingRequestProto {
                        paths,
                        start_after,
                        need_location: false,
                    },
                )
                .await
                .expect("getBatchedListing");
            r
        }
    };
    let first = batch(Bytes::new()).await;
    assert!(first.has_more);
    assert_eq!(first.listings.len(), 1);
    assert_eq!(first.listings[0].parent_idx, 0);
    assert_eq!(first.listings[0].partial_listing.len(), 5);
    let second = batch(first.start_after.clone()).await;
    assert!(!second.has_more, "{second:?}");
    let got: Vec<(u32, Vec<String>, Option<String>)> = second
        .listings
        .iter()
        .map(|l| {
            (
                l.parent_idx,
                names(&l.partial_listing),
                l.exception.as_ref().map(|e| e.class_name.clone()),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (0, vec!["f5".to_string()], None),
            (1, vec![], Some("java.io.FileNotFoundException".to_string())),
            (2, vec!["x".to_string(), "y".to_string()], None),
        ]
    );
    // A key from other paths is refused.
    let r: Result<pb::GetBatchedListingResponseProto, _> = rpc
        .call(
            "getBatchedListing",
            &pb::GetBatchedListingRequestProto {
                paths: vec!["/e".into()],
                start_after: first.start_after.clone(),
                need_location: false,
            },
        )
        .await;
    assert!(r.is_err(), "a key for other paths: {r:?}");
}
