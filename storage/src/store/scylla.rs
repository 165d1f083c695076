//! The ScyllaDB backend (`scylla` driver, prepared statements only). Schema: `schema/scylla.cql`;
//! the data model and its access paths: `docs/scylla.md`.
//!
//! Writes are `UPDATE … USING TTL ? SET value = ?`: a put binds the value, a delete binds null.
//! Rows written by UPDATE carry no row marker, so a null value removes the row, and puts and
//! deletes share one prepared statement. A batch within one partition is UNLOGGED (a single
//! partition's batch is atomic and isolated without the batch log); a batch across partitions is
//! LOGGED, because the Store promises atomic batches. Day-bucketed tables get a TTL
//! ([`ScyllaOptions::ttls`]); the rest none (TTL 0).

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use engage_config::{ScyllaConsistency, ScyllaReplication};
use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::statement::batch::{Batch, BatchType};
use scylla::statement::prepared::PreparedStatement;
use scylla::statement::Consistency;

use super::{Row, Store, StoreError, WriteOp};

/// How the keyspace is made and read: replication of a keyspace engage creates, the consistency
/// of reads and writes, and the TTL of each day-bucketed table.
#[derive(Clone, Debug)]
pub struct ScyllaOptions {
    /// Strategy of a keyspace engage creates (an existing one is left as it is).
    pub replication: ScyllaReplication,
    /// Replication factor of a keyspace engage creates.
    pub replication_factor: u32,
    /// Consistency of reads.
    pub read_consistency: ScyllaConsistency,
    /// Consistency of writes.
    pub write_consistency: ScyllaConsistency,
    /// Table -> seconds its rows live after their last write (day-bucketed tables).
    pub ttls: HashMap<&'static str, i32>,
}

impl ScyllaOptions {
    /// One node (the compose file, tests): `SimpleStrategy`, factor 1, `LOCAL_QUORUM`, no TTLs.
    pub fn single_node() -> Self {
        Self {
            replication: ScyllaReplication::Simple,
            replication_factor: 1,
            read_consistency: ScyllaConsistency::LocalQuorum,
            write_consistency: ScyllaConsistency::LocalQuorum,
            ttls: HashMap::new(),
        }
    }
}

/// A [`Store`] in a ScyllaDB keyspace.
#[derive(Clone)]
pub struct ScyllaStore {
    session: Arc<Session>,
    get: PreparedStatement,
    scan_from_start: PreparedStatement,
    scan_after: PreparedStatement,
    write: PreparedStatement,
    write_consistency: Consistency,
    ttls: Arc<HashMap<&'static str, i32>>,
}

fn backend(error: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(error.to_string())
}

/// The driver's consistency for a setting.
pub fn consistency(setting: ScyllaConsistency) -> Consistency {
    match setting {
        ScyllaConsistency::One => Consistency::One,
        ScyllaConsistency::LocalOne => Consistency::LocalOne,
        ScyllaConsistency::LocalQuorum => Consistency::LocalQuorum,
        ScyllaConsistency::Quorum => Consistency::Quorum,
        ScyllaConsistency::All => Consistency::All,
    }
}

/// `CREATE KEYSPACE` for `keyspace` with the options' replication.
pub fn create_keyspace_cql(keyspace: &str, options: &ScyllaOptions) -> String {
    let class = match options.replication {
        ScyllaReplication::Simple => "SimpleStrategy",
        ScyllaReplication::NetworkTopology => "NetworkTopologyStrategy",
    };
    format!(
        "CREATE KEYSPACE IF NOT EXISTS {keyspace} WITH replication = \
         {{'class': '{class}', 'replication_factor': {}}}",
        options.replication_factor
    )
}

/// The batch type for writes touching these partitions: UNLOGGED within one partition, LOGGED
/// across several.
pub fn batch_type<'a>(mut partitions: impl Iterator<Item = (&'a str, &'a str)>) -> BatchType {
    let Some(first) = partitions.next() else { return BatchType::Unlogged };
    if partitions.all(|other| other == first) {
        BatchType::Unlogged
    } else {
        BatchType::Logged
    }
}

impl ScyllaStore {
    /// Connects to `nodes` (`host:port`, comma-separated), creates the keyspace and table when
    /// missing, and prepares the statements at the options' consistency.
    pub async fn connect(nodes: &str, keyspace: &str, options: &ScyllaOptions) -> Result<Self, StoreError> {
        if keyspace.is_empty() || !keyspace.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(StoreError::Backend(format!("invalid keyspace name {keyspace:?}")));
        }
        let session = SessionBuilder::new()
            .known_nodes(nodes.split(',').map(str::trim).filter(|n| !n.is_empty()))
            .build()
            .await
            .map_err(backend)?;
        session.query_unpaged(create_keyspace_cql(keyspace, options), ()).await.map_err(backend)?;
        session
            .query_unpaged(
                format!(
                    "CREATE TABLE IF NOT EXISTS {keyspace}.rows (tbl text, pk text, ck blob, value blob, \
                     PRIMARY KEY ((tbl, pk), ck)) WITH CLUSTERING ORDER BY (ck ASC)"
                ),
                (),
            )
            .await
            .map_err(backend)?;
        let prepare = |cql: String, level: ScyllaConsistency| {
            let session = &session;
            async move {
                let mut statement = session.prepare(cql).await.map_err(backend)?;
                statement.set_consistency(consistency(level));
                Ok::<_, StoreError>(statement)
            }
        };
        let read = options.read_consistency;
        let get =
            prepare(format!("SELECT value FROM {keyspace}.rows WHERE tbl = ? AND pk = ? AND ck = ?"), read).await?;
        let scan_from_start =
            prepare(format!("SELECT ck, value FROM {keyspace}.rows WHERE tbl = ? AND pk = ? LIMIT ?"), read).await?;
        let scan_after =
            prepare(format!("SELECT ck, value FROM {keyspace}.rows WHERE tbl = ? AND pk = ? AND ck > ? LIMIT ?"), read)
                .await?;
        let write = prepare(
            format!("UPDATE {keyspace}.rows USING TTL ? SET value = ? WHERE tbl = ? AND pk = ? AND ck = ?"),
            options.write_consistency,
        )
        .await?;
        Ok(Self {
            session: Arc::new(session),
            get,
            scan_from_start,
            scan_after,
            write,
            write_consistency: consistency(options.write_consistency),
            ttls: Arc::new(options.ttls.clone()),
        })
    }
}

#[async_trait]
impl Store for ScyllaStore {
    async fn get(
        &self,
        table: &'static str,
        partition: &str,
        clustering: &[u8],
    ) -> Result<Option<Vec<u8>>, StoreError> {
        let result = self.session.execute_unpaged(&self.get, (table, partition, clustering)).await.map_err(backend)?;
        let rows = result.into_rows_result().map_err(backend)?;
        let first = rows.maybe_first_row::<(Option<Vec<u8>>,)>().map_err(backend)?;
        Ok(first.and_then(|(value,)| value))
    }

    async fn scan(
        &self,
        table: &'static str,
        partition: &str,
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<Row>, StoreError> {
        let limit = i32::try_from(limit).unwrap_or(i32::MAX);
        let result = match after {
            Some(after) => self.session.execute_unpaged(&self.scan_after, (table, partition, after, limit)).await,
            None => self.session.execute_unpaged(&self.scan_from_start, (table, partition, limit)).await,
        }
        .map_err(backend)?;
        let rows = result.into_rows_result().map_err(backend)?;
        let mut out = Vec::new();
        for row in rows.rows::<(Vec<u8>, Option<Vec<u8>>)>().map_err(backend)? {
            let (clustering, value) = row.map_err(backend)?;
            if let Some(value) = value {
                out.push(Row { clustering, value });
            }
        }
        Ok(out)
    }

    async fn batch(&self, ops: Vec<WriteOp>) -> Result<(), StoreError> {
        if ops.is_empty() {
            return Ok(());
        }
        let ops = super::last_writes(ops);
        let kind = batch_type(ops.iter().map(|op| match op {
            WriteOp::Put { table, partition, .. } | WriteOp::Delete { table, partition, .. } => {
                (*table, partition.as_str())
            }
        }));
        let mut batch = Batch::new(kind);
        batch.set_consistency(self.write_consistency);
        type Values = (i32, Option<Vec<u8>>, &'static str, String, Vec<u8>);
        let mut values: Vec<Values> = Vec::with_capacity(ops.len());
        for op in ops {
            batch.append_statement(self.write.clone());
            values.push(match op {
                WriteOp::Put { table, partition, clustering, value } => {
                    (self.ttls.get(table).copied().unwrap_or(0), Some(value), table, partition, clustering)
                }
                // a delete's TTL is moot; 0 keeps the statement one shape
                WriteOp::Delete { table, partition, clustering } => (0, None, table, partition, clustering),
            });
        }
        self.session.batch(&batch, values).await.map_err(backend)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The conformance suite against a real ScyllaDB. None can run on the build machines, so this
    /// test is ignored by default; `scripts/test.sh` runs it (`--run-ignored`) when
    /// `ENGAGE_TEST_SCYLLA=host:port` is set.
    #[tokio::test]
    #[ignore = "needs ENGAGE_TEST_SCYLLA=host:port (no ScyllaDB can run on the build machines)"]
    async fn scylla_store_passes_conformance() {
        let nodes = std::env::var("ENGAGE_TEST_SCYLLA").expect("ENGAGE_TEST_SCYLLA=host:port");
        let keyspace = format!("engage_conformance_{}", std::process::id());
        let mut options = ScyllaOptions::single_node();
        options.ttls.insert("ttl_table", 2);
        let store = ScyllaStore::connect(&nodes, &keyspace, &options).await.expect("scylla connects");
        crate::store::conformance::run_all(&store).await;
        // a day-bucketed table's rows go after their TTL; the others stay
        let put = |table: &'static str| WriteOp::Put {
            table,
            partition: "p|2026-11-26".to_owned(),
            clustering: b"k".to_vec(),
            value: b"v".to_vec(),
        };
        store.batch(vec![put("ttl_table"), put("kept_table")]).await.expect("written");
        tokio::time::sleep(std::time::Duration::from_secs(3)).await;
        assert_eq!(store.get("ttl_table", "p|2026-11-26", b"k").await.unwrap(), None);
        assert_eq!(store.get("kept_table", "p|2026-11-26", b"k").await.unwrap(), Some(b"v".to_vec()));
    }

    #[test]
    fn one_partition_is_an_unlogged_batch_and_several_a_logged_one() {
        assert_eq!(batch_type([("t", "a"), ("t", "a")].into_iter()), BatchType::Unlogged);
        assert_eq!(batch_type([("t", "a"), ("t", "b")].into_iter()), BatchType::Logged);
        assert_eq!(batch_type([("t", "a"), ("u", "a")].into_iter()), BatchType::Logged);
        assert_eq!(batch_type(std::iter::empty()), BatchType::Unlogged);
    }

    #[test]
    fn the_keyspace_takes_the_replication_settings() {
        let mut options = ScyllaOptions::single_node();
        assert!(
            create_keyspace_cql("engage", &options).ends_with("{'class': 'SimpleStrategy', 'replication_factor': 1}")
        );
        options.replication = ScyllaReplication::NetworkTopology;
        options.replication_factor = 3;
        assert!(create_keyspace_cql("engage", &options)
            .ends_with("{'class': 'NetworkTopologyStrategy', 'replication_factor': 3}"));
        assert_eq!(consistency(ScyllaConsistency::LocalQuorum), Consistency::LocalQuorum);
        assert_eq!(consistency(ScyllaConsistency::One), Consistency::One);
    }
}
