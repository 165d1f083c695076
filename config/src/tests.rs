use super::*;

#[test]
fn defaults_are_valid() {
    let settings = Settings::load_with_env(None, &[]).unwrap();
    assert_eq!(settings.http_addr.to_string(), "127.0.0.1:8080");
    assert_eq!(settings.log_sink, LogSinkKind::Embedded);
    assert_eq!(settings.log_org, "org");
}

#[test]
fn environment_overrides_file_which_overrides_defaults() {
    let dir = std::env::temp_dir().join(format!("engage-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("engage.toml");
    std::fs::write(&file, "log_org = \"fromfile\"\nhttp_addr = \"127.0.0.1:9000\"\n").unwrap();
    let settings = Settings::load_with_env(Some(&file), &[("ENGAGE_HTTP_ADDR", "127.0.0.1:9100")]).unwrap();
    assert_eq!(settings.log_org, "fromfile");
    assert_eq!(settings.http_addr.port(), 9100);
}

#[test]
fn invalid_values_name_the_setting() {
    let err = Settings::load_with_env(None, &[("ENGAGE_HTTP_ADDR", "nonsense")]).unwrap_err();
    assert_eq!(err.env, "ENGAGE_HTTP_ADDR");
    let err = Settings::load_with_env(None, &[("ENGAGE_LOG_SINK", "s3")]).unwrap_err();
    assert_eq!(err.env, "ENGAGE_LOG_SINK");
    let err = Settings::load_with_env(None, &[("ENGAGE_LOG_ORG", "a b")]).unwrap_err();
    assert_eq!(err.env, "ENGAGE_LOG_ORG");
    let err = Settings::load_with_env(None, &[("ENGAGE_JWKS_URL", "ftp://x/y/z")]).unwrap_err();
    assert_eq!(err.env, "ENGAGE_JWKS_URL");
    let err = Settings::load_with_env(None, &[("ENGAGE_HTTP_ADR", "127.0.0.1:1")]).unwrap_err();
    assert_eq!(err.env, "ENGAGE_HTTP_ADR");
    assert!(err.to_string().contains("not a known setting"), "{err}");
    assert!(err.to_string().contains("did you mean ENGAGE_HTTP_ADDR"), "{err}");
    let err = Settings::load_with_env(None, &[("ENGAGE_HTTP_ADRR", "127.0.0.1:1")]).unwrap_err();
    assert!(err.to_string().contains("did you mean ENGAGE_HTTP_ADDR"), "{err}");
    let err = Settings::load_with_env(None, &[("ENGAGE_WHATEVER_XYZZY", "1")]).unwrap_err();
    assert!(!err.to_string().contains("did you mean"), "{err}");
    for (name, value) in [
        ("ENGAGE_CACHED_CUSTOMERS_MAX", "0"),
        ("ENGAGE_STORE_CACHE_MIB", "0"),
        ("ENGAGE_STORE_MEMTABLE_MIB", "0"),
        ("ENGAGE_STORE_MEMTABLE_MIB", "4096"),
    ] {
        let err = Settings::load_with_env(None, &[(name, value)]).unwrap_err();
        assert_eq!(err.env, name);
    }
    let memory =
        Settings::load_with_env(None, &[("ENGAGE_CACHED_CUSTOMERS_MAX", "20000"), ("ENGAGE_STORE_CACHE_MIB", "8")])
            .unwrap();
    assert_eq!((memory.cached_customers_max, memory.store_cache_mib), (20_000, 8));
}

#[test]
fn a_host_name_with_a_port_is_an_address() {
    let settings = Settings::load_with_env(None, &[("ENGAGE_HTTP_ADDR", "localhost:8080")]).unwrap();
    assert_eq!(settings.http_addr.port(), 8080);
    assert!(settings.http_addr.ip().is_loopback());
    let err = Settings::load_with_env(None, &[("ENGAGE_HTTP_ADDR", "localhost")]).unwrap_err();
    assert!(err.to_string().contains("ENGAGE_HTTP_ADDR"), "{err}");
}

#[test]
fn the_logs_commands_token_is_not_a_setting() {
    // `engage logs tail|usage` read ENGAGE_LOGS_TOKEN themselves; every command must still start
    let settings = Settings::load_with_env(None, &[("ENGAGE_LOGS_TOKEN", "eyJhbGciOi.x.y")]).unwrap();
    assert!(!settings.to_toml_redacted().contains("eyJhbGciOi"));
    let err = Settings::load_with_env(None, &[("ENGAGE_LOGS_TOKENS", "x")]).unwrap_err();
    assert_eq!(err.env, "ENGAGE_LOGS_TOKENS");
}

#[test]
fn secrets_never_print() {
    let settings = Settings::load_with_env(None, &[("ENGAGE_ADMIN_KEY", "hunter2-secret")]).unwrap();
    assert_eq!(settings.admin_key.as_ref().map(Secret::expose), Some("hunter2-secret"));
    assert!(!format!("{settings:?}").contains("hunter2"));
}

#[test]
fn nats_url_selects_the_nats_store_and_roles_need_it() {
    let settings = Settings::load_with_env(None, &[("ENGAGE_NATS_URL", "nats://127.0.0.1:4222")]).unwrap();
    assert_eq!(settings.store_kind(), StoreKind::Nats);
    let err = Settings::load_with_env(None, &[("ENGAGE_ROLE", "node")]).unwrap_err();
    assert_eq!(err.env, "ENGAGE_ROLE");
    let err = Settings::load_with_env(None, &[("ENGAGE_PARTITIONS", "0")]).unwrap_err();
    assert_eq!(err.env, "ENGAGE_PARTITIONS");
}

#[test]
fn nats_url_is_a_server_list_and_replicas_are_checked() {
    let list = "nats://u:secret@127.0.0.1:4222, nats://127.0.0.1:4223,nats://127.0.0.1:4224";
    let settings = Settings::load_with_env(
        None,
        &[
            ("ENGAGE_NATS_URL", list),
            ("ENGAGE_NATS_REPLICAS", "3"),
            ("ENGAGE_NATS_REPLICAS_BY_NAME", "KV_engage_leases=1"),
        ],
    )
    .unwrap();
    assert_eq!(nats_servers(settings.nats_url.as_deref().unwrap()).len(), 3);
    let replicas = settings.nats_replicas().unwrap();
    assert_eq!((replicas.of("ENGAGE_ORDERS"), replicas.of("KV_engage_leases")), (3, 1));
    let text = settings.to_toml_redacted();
    assert!(!text.contains("u:secret") && text.contains("nats://***@127.0.0.1:4222"), "{text}");
    for (name, value) in [
        ("ENGAGE_NATS_URL", "nats://127.0.0.1:4222,nats://b:port"),
        ("ENGAGE_NATS_URL", " , "),
        ("ENGAGE_NATS_REPLICAS", "0"),
        ("ENGAGE_NATS_REPLICAS", "7"),
        ("ENGAGE_NATS_REPLICAS_BY_NAME", "ENGAGE_NOPE=3"),
        ("ENGAGE_NATS_REPLICAS_BY_NAME", "ENGAGE_ORDERS"),
        ("ENGAGE_SCYLLA_REPLICATION_FACTOR", "0"),
        ("ENGAGE_SCYLLA_READ_CONSISTENCY", "sometimes"),
    ] {
        let err = Settings::load_with_env(None, &[(name, value)]).unwrap_err();
        assert_eq!(err.env, name, "{value}: {err}");
    }
}

#[test]
fn job_schedules_are_checked() {
    let err = Settings::load_with_env(None, &[("ENGAGE_JOB_SMS_DRAIN", "every 3 minutes")]).unwrap_err();
    assert_eq!(err.env, "ENGAGE_JOB_SMS_DRAIN");
    assert!(Settings::load_with_env(None, &[("ENGAGE_JOB_SMS_DRAIN", "0 */2 * * * *")]).is_ok());
}

#[test]
fn test_switches_are_not_settings() {
    assert!(Settings::load_with_env(None, &[("ENGAGE_TEST_SCYLLA", "h:1")]).is_ok());
}

#[test]
fn errors_name_the_setting_as_written_with_an_example() {
    let dir = tempfile_dir("origin");
    let file = dir.join("engage.toml");
    std::fs::write(&file, "http_adress = \"127.0.0.1:1\"\n").unwrap();
    let err = Settings::load_with_env(Some(&file), &[]).unwrap_err();
    assert_eq!(err.origin, Origin::File(file.clone()));
    assert!(err.to_string().contains("`http_adress` in"), "{err}");
    assert!(!err.to_string().contains("ENGAGE_HTTP_ADRESS"), "{err}");
    std::fs::write(&file, "http_addr = \"localhost\"\n").unwrap();
    let err = Settings::load_with_env(Some(&file), &[]).unwrap_err();
    assert!(err.to_string().contains("example: http_addr = \"127.0.0.1:8080\""), "{err}");
    let err = Settings::load_with_env(Some(&file), &[("ENGAGE_HTTP_ADDR", "nowhere")]).unwrap_err();
    assert!(err.to_string().contains("example: ENGAGE_HTTP_ADDR=127.0.0.1:8080"), "{err}");
    std::fs::write(&file, "http_addr = \"localhost:8080\"\n").unwrap();
    assert_eq!(Settings::load_with_env(Some(&file), &[]).unwrap().http_addr.port(), 8080);
    let missing = dir.join("absent.toml");
    let err = Settings::load_with_env(Some(&missing), &[]).unwrap_err();
    assert!(err.to_string().starts_with("--config "), "{err}");
    assert!(!err.to_string().contains("ENGAGE_CONFIG"), "{err}");
    let err = Settings::load_with_env(None, &[("ENGAGE_LOG_LEVEL", "loud[")]).unwrap_err();
    assert_eq!(err.env, "ENGAGE_LOG_LEVEL");
    let err = Settings::load_with_env(None, &[("ENGAGE_DATA_DIR", "")]).unwrap_err();
    assert_eq!(err.env, "ENGAGE_DATA_DIR");
}

#[test]
fn credentials_are_redacted() {
    assert_eq!(redact_url("nats://user:secret@host:4222"), "nats://***@host:4222");
    assert_eq!(redact_url("nats://host:4222"), "nats://host:4222");
    assert_eq!(redact_url("https://a.example/x@y"), "https://a.example/x@y");
    assert_eq!(
        redact_in("cannot reach user:secret@host (secret)", "nats://user:secret@host"),
        "cannot reach ***@host (***)"
    );
    let settings = Settings::load_with_env(
        None,
        &[("ENGAGE_NATS_URL", "nats://user:secret@127.0.0.1:4222"), ("ENGAGE_PROVIDER_TOKEN", "tok-123456")],
    )
    .unwrap();
    let text = settings.to_toml_redacted();
    assert!(!text.contains("user:secret") && !text.contains("tok-123456"), "{text}");
    assert!(text.contains("nats_url = \"nats://***@127.0.0.1:4222\""), "{text}");
    assert!(text.contains("provider_token = \"***\""), "{text}");
    assert!(text.parse::<toml::Table>().is_ok(), "{text}");
}

fn tempfile_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("engage-config-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn a_partition_count_is_known_as_given_from_the_environment_or_a_file_even_at_the_default() {
    let settings = Settings::load_with_env(None, &[]).unwrap();
    assert_eq!((settings.partitions, settings.partitions_given), (64, false));
    let settings = Settings::load_with_env(None, &[("ENGAGE_PARTITIONS", "64")]).unwrap();
    assert_eq!((settings.partitions, settings.partitions_given), (64, true));
    let settings = Settings::load_with_env(None, &[("ENGAGE_PARTITIONS", "16")]).unwrap();
    assert_eq!((settings.partitions, settings.partitions_given), (16, true));
    let dir = std::env::temp_dir().join(format!("engage-config-partitions-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("engage.toml");
    std::fs::write(&file, "partitions = 64\n").unwrap();
    let settings = Settings::load_with_env(Some(&file), &[]).unwrap();
    assert_eq!((settings.partitions, settings.partitions_given), (64, true));
    std::fs::write(&file, "log_level = \"info\"\n").unwrap();
    let settings = Settings::load_with_env(Some(&file), &[]).unwrap();
    assert!(!settings.partitions_given);
    let _ = std::fs::remove_dir_all(&dir);
}
