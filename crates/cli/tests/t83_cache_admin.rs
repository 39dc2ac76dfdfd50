//! Centralized cache management over raw RPC, where the rules show that
//! `hdfs cacheadmin`'s printout (t34's golden transcript) hides: pools and
//! directives survive a restart from the edit log and from a checkpoint
//! image, directive ids keep rising, listings page 100 at a time with
//! `hasMore`, and a pool's details are hidden from callers it does not let
//! read.

mod common;

use cairn_proto::hadoop::hdfs as pb;
use cairn_proto::protocols::CLIENT_PROTOCOL;
use cairn_rpc::client::{Client, ClientError};
use common::{current_user, NameNode};

async fn rpc(nn: &NameNode, user: &str) -> Client {
    Client::connect(nn.addr, user, CLIENT_PROTOCOL)
        .await
        .expect("connect")
}

async fn add_pool(c: &Client, name: &str, mode: Option<i32>) -> Result<(), ClientError> {
    let info = pb::CachePoolInfoProto {
        pool_name: Some(name.into()),
        mode,
        ..Default::default()
    };
    c.call::<_, pb::AddCachePoolResponseProto>(
        "addCachePool",
        &pb::AddCachePoolRequestProto { info },
    )
    .await
    .map(|_| ())
}

async fn add_directive(c: &Client, path: &str, pool: &str) -> Result<i64, ClientError> {
    let info = pb::CacheDirectiveInfoProto {
        path: Some(path.into()),
        pool: Some(pool.into()),
        ..Default::default()
    };
    let r: pb::AddCacheDirectiveResponseProto = c
        .call(
            "addCacheDirective",
            &pb::AddCacheDirectiveRequestProto {
                info,
                cache_flags: None,
            },
        )
        .await?;
    Ok(r.id)
}

async fn pools(c: &Client, prev: &str) -> pb::ListCachePoolsResponseProto {
    c.call(
        "listCachePools",
        &pb::ListCachePoolsRequestProto {
            prev_pool_name: prev.into(),
        },
    )
    .await
    .expect("listCachePools")
}

async fn directives(c: &Client, prev: i64) -> pb::ListCacheDirectivesResponseProto {
    c.call(
        "listCacheDirectives",
        &pb::ListCacheDirectivesRequestProto {
            prev_id: prev,
            filter: pb::CacheDirectiveInfoProto::default(),
        },
    )
    .await
    .expect("listCacheDirectives")
}

fn ids(r: &pb::ListCacheDirectivesResponseProto) -> Vec<i64> {
    r.elements.iter().filter_map(|e| e.info.id).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pools_and_directives_survive_restarts_and_page() {
    let nn = NameNode::start(&[]);
    let su = current_user();
    let c = rpc(&nn, &su).await;
    add_pool(&c, "p", None).await.expect("add pool");
    add_pool(&c, "private", Some(0o700))
        .await
        .expect("add pool");
    let first = add_directive(&c, "/a", "p").await.expect("add");
    let second = add_directive(&c, "/b", "p").await.expect("add");
    assert_eq!((first, second), (1, 2));
    let removed = c
        .call::<_, pb::RemoveCacheDirectiveResponseProto>(
            "removeCacheDirective",
            &pb::RemoveCacheDirectiveRequestProto { id: second },
        )
        .await;
    removed.expect("remove");
    // An id is not handed out again while the NameNode runs.
    assert_eq!(add_directive(&c, "/c", "p").await.expect("add"), 3);

    // Replayed from the edit log.
    drop(c);
    let nn = NameNode::start_in(nn.kill(), &[]);
    let c = rpc(&nn, &su).await;
    assert_eq!(ids(&directives(&c, 0).await), [1, 3], "{}", nn.log());
    let names: Vec<_> = pools(&c, "")
        .await
        .entries
        .iter()
        .map(|e| e.info.pool_name.clone().unwrap_or_default())
        .collect();
    assert_eq!(names, ["p", "private"]);
    assert_eq!(add_directive(&c, "/d", "private").await.expect("add"), 4);
    // The newest id is removed before the image is written: the image
    // keeps the counter, so 5 is not handed out again.
    assert_eq!(add_directive(&c, "/e", "p").await.expect("add"), 5);
    let _: pb::RemoveCacheDirectiveResponseProto = c
        .call(
            "removeCacheDirective",
            &pb::RemoveCacheDirectiveRequestProto { id: 5 },
        )
        .await
        .expect("remove");

    // From a checkpoint image (saveNamespace in safe mode).
    for action in [
        pb::SafeModeActionProto::SafemodeEnter,
        pb::SafeModeActionProto::SafemodeLeave,
    ] {
        if action == pb::SafeModeActionProto::SafemodeLeave {
            let _: pb::SaveNamespaceResponseProto = c
                .call(
                    "saveNamespace",
                    &pb::SaveNamespaceRequestProto {
                        time_window: Some(0),
                        tx_gap: Some(0),
                    },
                )
                .await
                .expect("saveNamespace");
        }
        let _: pb::SetSafeModeResponseProto = c
            .call(
                "setSafeMode",
                &pb::SetSafeModeRequestProto {
                    action: action as i32,
                    checked: None,
                },
            )
            .await
            .expect("safe mode");
    }
    drop(c);
    let nn = NameNode::start_in(nn.kill(), &[]);
    assert!(nn.log().contains("image"), "{}", nn.log());
    let c = rpc(&nn, &su).await;
    assert_eq!(ids(&directives(&c, 0).await), [1, 3, 4]);
    assert_eq!(add_directive(&c, "/f", "p").await.expect("add"), 6);
    let got = directives(&c, 3).await;
    assert_eq!((ids(&got), got.has_more), (vec![4, 6], false));
    let e = &got.elements[0];
    assert_eq!(
        (
            e.info.path.as_deref(),
            e.info.pool.as_deref(),
            e.info.replication
        ),
        (Some("/d"), Some("private"), Some(1))
    );
    // "Never" is an absolute time far ahead, as HDFS stores it.
    let expiry = e.info.expiration.as_ref().expect("expiration");
    assert!(
        !expiry.is_relative && expiry.millis > i64::MAX / 4,
        "{expiry:?}"
    );

    // A caller the private pool does not let read sees its name only, and
    // none of its directives.
    let alice = rpc(&nn, "alice").await;
    let seen = pools(&alice, "").await;
    let private = &seen.entries[1];
    assert_eq!(private.info.pool_name.as_deref(), Some("private"));
    assert!(private.info.owner_name.is_none() && private.info.mode.is_none());
    assert_eq!(ids(&directives(&alice, 0).await), [1, 3, 6]);

    // Pages of 100, resumed after the last pool name and directive id.
    for i in 0..120 {
        add_pool(&c, &format!("q{i:03}"), None).await.expect("add");
    }
    for i in 0..150 {
        add_directive(&c, &format!("/many/{i}"), "p")
            .await
            .expect("add");
    }
    let page = pools(&c, "").await;
    assert_eq!((page.entries.len(), page.has_more), (100, true));
    let last = page.entries[99].info.pool_name.clone().unwrap_or_default();
    let rest = pools(&c, &last).await;
    assert_eq!((rest.entries.len(), rest.has_more), (22, false));
    let page = directives(&c, 0).await;
    assert_eq!((page.elements.len(), page.has_more), (100, true));
    let rest = directives(&c, *ids(&page).last().expect("ids")).await;
    assert_eq!((rest.elements.len(), rest.has_more), (54, false));

    // Replications are Java shorts: the translator refuses a wider one
    // before any check (`Shorts.checkedCast`), the uint32 read as an int.
    let add = |replication: u32, pool: &'static str| {
        let c = &c;
        async move {
            let info = pb::CacheDirectiveInfoProto {
                path: Some("/f".into()),
                pool: Some(pool.into()),
                replication: Some(replication),
                ..Default::default()
            };
            let r: Result<pb::AddCacheDirectiveResponseProto, _> = c
                .call(
                    "addCacheDirective",
                    &pb::AddCacheDirectiveRequestProto {
                        info,
                        cache_flags: None,
                    },
                )
                .await;
            match r {
                Err(ClientError::Remote { class, message }) => (class, message),
                other => panic!("replication {replication}: {other:?}"),
            }
        }
    };
    let illegal = "java.lang.IllegalArgumentException".to_string();
    let invalid = "org.apache.hadoop.fs.InvalidRequestException".to_string();
    assert_eq!(
        add(40_000, "none").await,
        (illegal.clone(), "Out of range: 40000".into())
    );
    assert_eq!(
        add(u32::MAX - 40_000, "p").await,
        (illegal, "Out of range: -40001".into())
    );
    assert_eq!(
        add(u32::MAX, "p").await,
        (invalid.clone(), "Invalid replication factor -1 <= 0".into())
    );
    assert_eq!(
        add(0, "p").await,
        (invalid.clone(), "Invalid replication factor 0 <= 0".into())
    );
    let negative = pb::CachePoolInfoProto {
        pool_name: Some("neg".into()),
        default_replication: Some(u32::MAX),
        ..Default::default()
    };
    let r = c
        .call::<_, pb::AddCachePoolResponseProto>(
            "addCachePool",
            &pb::AddCachePoolRequestProto { info: negative },
        )
        .await;
    assert!(
        matches!(&r, Err(ClientError::Remote { class, message })
            if *class == invalid && message == "Default Replication is negative"),
        "{r:?}"
    );
}
