//! End-to-end tests: the application (or the `engage` binary) on a loopback port, talking to real
//! parts: moto_server as CloudWatch Logs (`ENGAGE_TEST_MOTO_URL`, started by `scripts/test.sh`), a
//! local HTTP server serving a JWKS made from keys the test generates.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod helpers;
mod procs;

mod answers;
mod bills;
mod bounds;
mod campaigns;
mod cli;
mod cloudwatch;
mod cluster;
mod cluster_failover;
mod cluster_kit;
mod cluster_moves;
mod cluster_pairs;
mod cluster_rollouts;
mod consent;
mod consent_forms;
mod dead_letters;
mod erasure;
mod erasure_bus;
mod examples;
mod fcm;
mod feedback;
mod feedback_sync;
mod first_hour;
mod fraud;
mod generated_client;
mod integration_routes;
mod isolation;
mod job_inputs;
mod jobs;
mod journey_runs;
mod journeys;
mod jwt;
mod legacy_routes;
mod legacy_shapes;
mod log_edges;
mod log_retention;
mod logs_api;
mod logs_tail;
mod loyalty;
mod loyalty_programme;
mod one_door;
mod open_routes;
mod operability;
mod ops;
mod order_race;
mod otlp;
mod pages;
mod paid_reactions;
mod partition_count;
mod passivation;
mod platform;
mod readme_try;
mod refunds;
mod sender_webhooks;
mod senders;
mod stats;
mod stats_dashboard;
mod stream_bounds;
mod token_revocation;
mod wallet;
