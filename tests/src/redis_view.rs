//! What a store wrote in Redis, read over a connection of the test's own: values, their
//! expiry, the keys under a pattern, and the commands the server counted.

use std::collections::BTreeMap;

use redis::aio::MultiplexedConnection;
use tool_runtime::idempotency::RedisStore;

use crate::redis_server::RedisServer;

/// A `RedisStore` on `server`, with the default prefix and timeout.
///
/// # Panics
///
/// If the store cannot connect.
pub async fn connect(server: &RedisServer) -> RedisStore {
    match RedisStore::connect(&server.url()).await {
        Ok(store) => store,
        Err(error) => panic!("the store does not connect to {}: {error}", server.url()),
    }
}

/// A connection of the test's own, to look at what the store wrote.
///
/// # Panics
///
/// If it cannot connect.
pub async fn observer(server: &RedisServer) -> MultiplexedConnection {
    let client = match redis::Client::open(server.url()) {
        Ok(client) => client,
        Err(error) => panic!("{}: {error}", server.url()),
    };
    match client.get_multiplexed_async_connection().await {
        Ok(connection) => connection,
        Err(error) => panic!("the observer does not connect: {error}"),
    }
}

/// Runs `command` and answers its reply.
///
/// # Panics
///
/// If the server answers an error, or a reply of another type.
async fn query<T: redis::FromRedisValue>(
    connection: &mut MultiplexedConnection,
    command: &redis::Cmd,
) -> T {
    match command.query_async(connection).await {
        Ok(reply) => reply,
        Err(error) => panic!("{command:?}: {error}"),
    }
}

/// The text at `key` (`GET`), if any.
pub async fn get(connection: &mut MultiplexedConnection, key: &str) -> Option<String> {
    query(connection, redis::cmd("GET").arg(key)).await
}

/// The value at `key`, as JSON, if any.
///
/// # Panics
///
/// If it is not JSON.
pub async fn entry(connection: &mut MultiplexedConnection, key: &str) -> Option<serde_json::Value> {
    get(connection, key)
        .await
        .map(|text| match serde_json::from_str(&text) {
            Ok(value) => value,
            Err(error) => panic!("{key} holds no JSON ({error}): {text}"),
        })
}

/// How many milliseconds `key` has left (`PTTL`: -1 without an expiry, -2 when absent).
pub async fn pttl(connection: &mut MultiplexedConnection, key: &str) -> i64 {
    query(connection, redis::cmd("PTTL").arg(key)).await
}

/// Whether `key` exists.
pub async fn exists(connection: &mut MultiplexedConnection, key: &str) -> bool {
    query::<i64>(connection, redis::cmd("EXISTS").arg(key)).await == 1
}

/// The keys matching `pattern` (`KEYS`), sorted.
pub async fn keys(connection: &mut MultiplexedConnection, pattern: &str) -> Vec<String> {
    let mut keys: Vec<String> = query(connection, redis::cmd("KEYS").arg(pattern)).await;
    keys.sort();
    keys
}

/// The calls of every command so far, from `INFO commandstats` (without the observer's own
/// `INFO`).
pub async fn command_calls(connection: &mut MultiplexedConnection) -> BTreeMap<String, u64> {
    let info: String = query(connection, redis::cmd("INFO").arg("commandstats")).await;
    info.lines()
        .filter_map(|line| {
            let (name, stats) = line.strip_prefix("cmdstat_")?.split_once(':')?;
            let calls = stats
                .split(',')
                .find_map(|stat| stat.strip_prefix("calls="))?;
            Some((name.to_owned(), calls.parse().ok()?))
        })
        .filter(|(name, _)| name != "info")
        .collect()
}

/// What changed between two [`command_calls`].
pub fn delta(
    before: &BTreeMap<String, u64>,
    after: &BTreeMap<String, u64>,
) -> BTreeMap<String, u64> {
    after
        .iter()
        .filter_map(|(name, calls)| {
            let grown = calls - before.get(name).copied().unwrap_or(0);
            (grown > 0).then(|| (name.clone(), grown))
        })
        .collect()
}

/// A [`command_calls`] delta written out: `[("evalsha", 2), ("get", 1)]`.
pub fn calls(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
    pairs
        .iter()
        .map(|(name, calls)| ((*name).to_owned(), *calls))
        .collect()
}

/// Pauses every client's writes for `millis` (`CLIENT PAUSE .. WRITE`): what they send is
/// applied when the pause ends.
pub async fn pause_writes(connection: &mut MultiplexedConnection, millis: u64) {
    query::<()>(
        connection,
        redis::cmd("CLIENT").arg("PAUSE").arg(millis).arg("WRITE"),
    )
    .await;
}

/// Returns once a pause of writes (shorter than 2 s) has ended: a write of a plain connection
/// of its own is held until then.
///
/// # Panics
///
/// If the write fails.
pub fn after_the_pause(server: &RedisServer) {
    let address = format!("127.0.0.1:{}", server.port());
    if let Err(error) = crate::redis_server::command(&address, &["INCR", "probe"]) {
        panic!("INCR does not answer after the pause: {error}");
    }
}
