//! The names of the store's tables (their layout is listed in [`crate::repo`]): a leaf module,
//! so the key builders ([`crate::keys`]) and the typed tables ([`crate::repo`]) share them without
//! importing each other.

/// `customers`.
pub const CUSTOMERS: &str = "customers";
/// `orders`.
pub const ORDERS: &str = "orders";
/// `order_refunds`: partition tenant, clustering `outlet|orderId`: the refunds sent on their own
/// (`/integration/v1/order/refund`), by refund id: an amount or `"whole"`.
pub const ORDER_REFUNDS: &str = "order_refunds";
/// `crm_queue`.
pub const CRM_QUEUE: &str = "crm_queue";
/// `businesses`.
pub const BUSINESSES: &str = "businesses";
/// `checkins`.
pub const CHECKINS: &str = "checkins";
/// `customer_orders`: partition `tenant|phone`, clustering `outlet/orderId`: every order of a
/// customer (the customer's row keeps only the latest 16), where an export and an erasure find
/// them.
pub const CUSTOMER_ORDERS: &str = "customer_orders";
/// `fraud_config`: partition tenant, clustering `velocity` or `alerts`.
pub const FRAUD_CONFIG: &str = "fraud_config";
/// `fraud_blocklist`: partition tenant, clustering phone.
pub const BLOCKLIST: &str = "fraud_blocklist";
/// `fraud_flags`: partition tenant, clustering flag id (time-ordered).
pub const FRAUD_FLAGS: &str = "fraud_flags";
/// `business_wallets`: partition tenant, clustering business id.
pub const BUSINESS_WALLETS: &str = "business_wallets";
/// `wallet_txns`: partition `tenant|business`, clustering the wallet's transaction sequence.
pub const WALLET_TXNS: &str = "wallet_txns";
/// `wallet_refs`: partition `tenant|business`, clustering a recharge reference or send id.
pub const WALLET_REFS: &str = "wallet_refs";
/// `channel_queue`: partition `<sms|chat|push>_queue_<YYYYMMDD>`, clustering `tenant|send id`.
pub const CHANNEL_QUEUE: &str = "channel_queue";
/// `channel_work`: partition `<sms|chat|push>_queue_<YYYYMMDD>`, clustering `tenant|send id`: the
/// queued sends a drain or the chat refund job still has to act on (pending, or a failed chat
/// send not refunded), so their runs read the work left, not the day's every send.
pub const CHANNEL_WORK: &str = "channel_work";
/// `rewards`: partition tenant, clustering reward id: the brand's catalogue.
pub const REWARDS: &str = "rewards";
/// `pending_coupons`: partition tenant, clustering order id: the coupon waiting for that order.
pub const PENDING_COUPONS: &str = "pending_coupons";
/// `coupons`: partition tenant, clustering coupon code.
pub const COUPONS: &str = "coupons";
/// `loyalty_otps`: partition `tenant|phone`, clustering `otp`: the customer's current one-time
/// password (hashed), its expiry, attempts, and a verification window.
pub const OTPS: &str = "loyalty_otps";
/// `loyalty_redemptions`: partition `tenant|phone`, clustering order id.
pub const REDEMPTIONS: &str = "loyalty_redemptions";
/// `pending_redemptions`: partition `due|<UTC day of expires_at>` (`due` for rows from before the
/// day buckets), clustering `expires_at|tenant|order id`: POS redemptions waiting for their order,
/// in the order the revoke job needs them.
pub const PENDING_REDEMPTIONS: &str = "pending_redemptions";
/// `loyalty_rules`: partition tenant, clustering `rules`.
pub const LOYALTY_RULES: &str = "loyalty_rules";
/// `loyalty_ledger`: partition `tenant|phone`, clustering the customer's ledger sequence number.
pub const LOYALTY_LEDGER: &str = "loyalty_ledger";

/// `loyalty_daily`: partition `tenant|YYYY-MM-DD` (IST), clustering `phone|ledger sequence`: a
/// copy of each ledger entry's kind and points under its day, so a day-wise report reads one
/// partition per day. Keyed like the ledger row, so a retried write replaces itself.
pub const LOYALTY_DAILY: &str = "loyalty_daily";
/// `points_expiry`: partition `due|<UTC day of expires_at>` (`due` before the day buckets),
/// clustering `expires_at|tenant|phone`: who holds points that expire when, in the order the
/// expiry job needs them.
pub const POINTS_EXPIRY: &str = "points_expiry";

/// `wallet_pricing`: partition tenant, clustering `pricing`: the brand's price table.
pub const WALLET_PRICING: &str = "wallet_pricing";
/// `campaign_journeys`: partition tenant, clustering the journey id.
pub const CAMPAIGN_JOURNEYS: &str = "campaign_journeys";
/// `journey_types`: partition `brand|<tenant>`, clustering the type id (types a brand added by
/// `/crm_api/autoCampaign`); partition `all` holds, read-only, types added before they belonged to a brand.
pub const JOURNEY_TYPES: &str = "journey_types";
/// `journey_brands`: partition `all`, clustering tenant: the brands with journey configurations.
pub const JOURNEY_BRANDS: &str = "journey_brands";
/// `journey_sends`: partition `tenant|journey`, clustering `phone|occasion`: each decision.
pub const JOURNEY_SENDS: &str = "journey_sends";
/// `journey_runs`: partition tenant, clustering `journey|day`: the send history.
pub const JOURNEY_RUNS: &str = "journey_runs";
/// `consent`: partition tenant, clustering phone: a customer's marketing subscriptions
/// ([`crate::domain::consent::Subscriptions`]); clustering `~defaults`: the brand's defaults.
pub const CONSENT: &str = "consent";
/// `consent_links`: partition the code's first two characters, clustering the code of an
/// opt-out link (`/u/<code>`): its brand and customer.
pub const CONSENT_LINKS: &str = "consent_links";
/// `erasures`: partition tenant, clustering `<micros>|<digest>`: the audit of each erasure (when,
/// by whom, how many rows), no personal data.
pub const ERASURES: &str = "erasures";
/// `journey_settings`: partition tenant, clustering `settings`: quiet hours, frequency cap.
pub const JOURNEY_SETTINGS: &str = "journey_settings";
/// `campaign_tags`: partition tenant, clustering tag id: the brand's campaign tags.
pub const CAMPAIGN_TAGS: &str = "campaign_tags";
/// `open_carts`: partition `brand|<tenant>` (`all` for carts from before each brand had its own),
/// clustering `tenant|outlet/orderId`: carts that may be abandoned.
pub const OPEN_CARTS: &str = "open_carts";
/// `cart_brands`: partition `all`, clustering tenant: brands that indexed a cart.
pub const CART_BRANDS: &str = "cart_brands";
/// `auto_campaign_roi`: partition `tenant|journey`, clustering `day|mode`: attributed ROI.
pub const CAMPAIGN_ROI: &str = "auto_campaign_roi";
/// `bulk_campaigns`: partition tenant, clustering the campaign id (12 digits): bulk campaigns.
pub const BULK_CAMPAIGNS: &str = "bulk_campaigns";
/// `business_configs`: partition tenant, clustering the business (`0` for the brand's own
/// record): the flags the daily sync sets (`auto_campaign`).
pub const BUSINESS_CONFIGS: &str = "business_configs";
/// `service_secrets`: partition `all`, clustering the secret's name: secrets engage made itself
/// (the link-signing secret when `ENGAGE_LINK_SECRET` is unset).
pub const SERVICE_SECRETS: &str = "service_secrets";

/// `bill_configs`: partition tenant, clustering business id: bill configurations.
pub const BILL_CONFIGS: &str = "bill_configs";
/// `bill_widgets`: partition tenant, clustering the mapping id: bill widgets.
pub const BILL_WIDGETS: &str = "bill_widgets";
/// `digital_bills`: partition tenant, clustering bill id.
pub const DIGITAL_BILLS: &str = "digital_bills";
/// `bill_codes`: partition the bill id's first two characters, clustering bill id: its brand.
pub const BILL_CODES: &str = "bill_codes";
/// `bill_aliases`: partition tenant, clustering a link service's bill id: the bill's own id.
pub const BILL_ALIASES: &str = "bill_aliases";
/// `bill_funnel`: partition tenant, clustering `IST day|outlet`: the daily funnel.
pub const BILL_FUNNEL: &str = "bill_funnel";
/// `bill_skips`: partition `tenant|IST day`, clustering `outlet|orderId`: skipped orders.
pub const BILL_SKIPS: &str = "bill_skips";
/// `bill_brands`: partition `all`, clustering tenant: brands with bill configurations.
pub const BILL_BRANDS: &str = "bill_brands";

/// `feedback_configs`: partition tenant, clustering outlet (`0`: the brand's own).
pub const FEEDBACK_CONFIGS: &str = "feedback_configs";
/// `feedback_requests`: partition tenant, clustering `outlet|orderId`.
pub const FEEDBACK_REQUESTS: &str = "feedback_requests";
/// `consent_skips`: marketing sends skipped because the customer unsubscribed, per channel;
/// partition tenant, clustering `IST day|outlet`.
pub const CONSENT_SKIPS: &str = "consent_skips";
/// `brand_senders`: a brand's own sender per channel; partition tenant, clustering the channel.
pub const BRAND_SENDERS: &str = "brand_senders";
/// `send_receipts`: providers' receipts counted per channel and status (`sms_delivered`,
/// `chat_read`, …); partition tenant, clustering `IST day|outlet`.
pub const SEND_RECEIPTS: &str = "send_receipts";
/// `sender_directory`: whose sender a provider's number is, for its webhooks; partition the
/// provider, clustering `account|number` as the provider sends them (`{"tenant": …}`).
pub const SENDER_DIRECTORY: &str = "sender_directory";
/// `feedback_funnel`: partition tenant, clustering `IST day|outlet`.
pub const FEEDBACK_FUNNEL: &str = "feedback_funnel";
/// `ratings`: partition tenant, clustering `outlet|orderId|source`.
pub const RATINGS: &str = "ratings";

/// `nps_responses`: partition tenant, clustering the NPS id.
pub const NPS_RESPONSES: &str = "nps_responses";
/// `feedback_brands`: partition `all`, clustering tenant.
pub const FEEDBACK_BRANDS: &str = "feedback_brands";

/// `feedback_recoveries`: partition tenant, clustering `outlet|orderId`.
pub const FEEDBACK_RECOVERIES: &str = "feedback_recoveries";

/// `store_reviews`: partition `tenant|<store>`, clustering review id.
pub const STORE_REVIEWS: &str = "store_reviews";
/// `review_markers`: partition tenant, clustering the store.
pub const REVIEW_MARKERS: &str = "review_markers";

/// `stats_days`.
pub const STATS_DAYS: &str = "stats_days";
/// `stats_special_days`.
pub const STATS_SPECIAL_DAYS: &str = "stats_special_days";
/// `access_settings`: partition tenant, clustering the setting's name (`open_routes`).
pub const ACCESS_SETTINGS: &str = "access_settings";
/// `legacy_feedback_sms`: partition `pending|<tenant>` (still to call) or `done|<tenant>` (sent
/// or given up; `all` for rows from before), clustering `tenant|id`.
pub const LEGACY_FEEDBACK_SMS: &str = "legacy_feedback_sms";
/// `legacy_sms_brands`: partition `all`, clustering tenant: brands that queued a legacy SMS.
pub const LEGACY_SMS_BRANDS: &str = "legacy_sms_brands";

/// `job_cursors`: partition a due-time index's table name, clustering `oldest_day`: the oldest
/// day bucket its job still reads.
pub const JOB_CURSORS: &str = "job_cursors";

/// How long rows of the day-bucketed tables (a day in the partition key) are kept after their
/// last write, in days: on ScyllaDB as a TTL on each write (`docs/scylla.md`). Longer than any
/// job, report or replay reads back.
pub const DAY_BUCKET_RETENTION_DAYS: &[(&str, u32)] = &[
    // the durable order queue: bill generation reads the day, replays a few days
    (CRM_QUEUE, 35),
    // the per-date channel queues: drains read yesterday and today, the chat refund job a week
    (CHANNEL_QUEUE, 35),
    // their work-left markers: a marker outliving its queue row is read as stale and removed
    (CHANNEL_WORK, 35),
    // day-wise loyalty reports reach back a year
    (LOYALTY_DAILY, 400),
    // skipped bills: the daily bill report and a quarter of look-back
    (BILL_SKIPS, 90),
];
