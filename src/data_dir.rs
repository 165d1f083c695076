//! The data directory: its owner lock (one process at a time), the admin key kept in it, and which settings need it.

use anyhow::Context;
use engage_storage::EmbeddedStore;
use std::path::Path;

#[allow(unused_imports)]
use super::*;

/// Reads `<data_dir>/admin.key`, creating it (mode 0600) with a random key when missing.
pub fn admin_key(settings: &Settings) -> anyhow::Result<String> {
    if let Some(key) = &settings.admin_key {
        return Ok(key.expose().to_owned());
    }
    let path = settings.admin_key_file();
    if let Ok(key) = std::fs::read_to_string(&path) {
        return Ok(key.trim().to_owned());
    }
    std::fs::create_dir_all(&settings.data_dir)?;
    let key = format!("{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple());
    write_private(&path, &key).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(key)
}

pub(super) fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)?.write_all(text.as_bytes())
}

/// Whether this process needs the local data dir: the embedded store holds the platform's tables,
/// or it serves the log routes with the embedded log sink. Actor nodes and ingresses on NATS (or
/// ScyllaDB) with the CloudWatch sink neither open nor lock it.
pub fn needs_data_dir(settings: &Settings) -> bool {
    settings.store_kind() == StoreKind::Embedded || serves_embedded_logs(settings)
}

/// Whether this process serves the log routes with the embedded sink (and so keeps the segment
/// log in its data dir).
pub(super) fn serves_embedded_logs(settings: &Settings) -> bool {
    settings.role != Role::Node && settings.log_sink == LogSinkKind::Embedded
}

/// The file in the data dir naming the process that holds it.
pub(super) const OWNER_FILE: &str = "engage.owner";

/// Opens the embedded store in the data dir; when another process holds it, says which and what
/// to set.
pub(super) fn open_data_dir(settings: &Settings) -> anyhow::Result<EmbeddedStore> {
    let dir = &settings.data_dir;
    match EmbeddedStore::open_sized(dir, settings.store_cache_mib << 20, settings.store_memtable_mib << 20) {
        Ok(store) => {
            let owner =
                format!("pid {} serving {} (role {:?})\n", std::process::id(), settings.http_addr, settings.role)
                    .to_lowercase();
            let _ = std::fs::write(dir.join(OWNER_FILE), owner);
            Ok(store)
        }
        Err(error) if error.to_string().contains("Locked") => {
            let holder = std::fs::read_to_string(dir.join(OWNER_FILE))
                .map(|text| format!("another engage process ({})", text.trim()))
                .unwrap_or_else(|_| "another engage process".to_owned());
            anyhow::bail!(
                "the data dir {} is in use by {holder}: give this process its own ENGAGE_DATA_DIR \
                 (e.g. ENGAGE_DATA_DIR=./data-2), or stop that process",
                dir.display()
            )
        }
        Err(error) => Err(error).with_context(|| format!("cannot open the embedded store in {}", dir.display())),
    }
}
