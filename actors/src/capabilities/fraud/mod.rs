//! Fraud prevention: velocity limits, flags raised on breaches, staff actions on flags, the
//! blocklist (its check on every loyalty action, its additions and removals), the alert settings
//! and the alert sends. Every fraud write goes through here, in the brand's tenant actor: the
//! routes only parse and answer.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use engage_storage::{StoreError, WriteOp};

use crate::capabilities::wallet::{self, SendRequest};
use crate::domain::customer::Customer;
use crate::domain::fraud::{
    count_in_period, transition, FlagAction, FlagState, FraudFlag, TransitionRefused, VelocityRules, TXN_EARN,
    TXN_REDEEM,
};
use crate::domain::wallet::{Channel, Purpose, TemplateType};
use crate::keys::{self, digest};
use crate::query::{question, QueryError};
use crate::tenant_core::Tenant;

mod reads;
pub use reads::*;

/// Fraud queries.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "query", rename_all = "snake_case")]
pub enum FraudQuery {
    /// See [`SetVelocity`].
    SetVelocity(SetVelocity),
    /// See [`GetVelocity`].
    GetVelocity(GetVelocity),
    /// See [`Flag`].
    Flag(Flag),
    /// See [`Evaluate`].
    Evaluate(Evaluate),
    /// See [`SaveAlerts`].
    SaveAlerts(SaveAlerts),
    /// See [`Alerts`].
    Alerts(Alerts),
    /// See [`Blocklist`].
    Blocklist(Blocklist),
    /// See [`Unblocklist`].
    Unblocklist(Unblocklist),
    /// See [`SendAlert`].
    SendAlert(SendAlert),
    /// See [`BlocklistPage`].
    BlocklistPage(BlocklistPage),
    /// See [`FlagPage`].
    FlagPage(FlagPage),
    /// See [`GroupFlags`].
    GroupFlags(GroupFlags),
    /// See [`CountFlags`].
    CountFlags(CountFlags),
}

question! {
    /// Replace the brand's velocity limits; answers them.
    pub struct SetVelocity {
        /// The limits.
        pub rules: VelocityRules,
    } -> VelocityRules;
}

question! {
    /// The brand's velocity limits.
    pub struct GetVelocity {} -> VelocityRules;
}

question! {
    /// Staff act on a contact's open fraud flags (block, unblock, resolve): [`FlagOutcome`].
    pub struct Flag {
        /// Customer phone.
        pub contact: String,
        /// What to do.
        pub action: FlagAction,
        /// Staff comment.
        pub comment: Option<String>,
        /// Who acts.
        pub submitted_by: String,
    } -> FlagOutcome;
}

question! {
    /// Blocked state, open flags and velocity counts of a contact: [`Evaluation`].
    pub struct Evaluate {
        /// Customer phone.
        pub contact: String,
    } -> Evaluation;
}

question! {
    /// Replace the brand's alert settings: [`AlertSettings`].
    pub struct SaveAlerts {
        /// The settings.
        pub settings: AlertSettings,
    } -> AlertSettings;
}

question! {
    /// The brand's alert settings: `Option<AlertSettings>`.
    pub struct Alerts {} -> Option<AlertSettings>;
}

question! {
    /// Put contacts on the blocklist (each valid, each once): [`Blocklisted`].
    pub struct Blocklist {
        /// The numbers.
        pub contacts: Vec<String>,
        /// Where they came from (`csv`).
        pub source: String,
        /// The clock.
        pub now: DateTime<Utc>,
    } -> Blocklisted;
}

question! {
    /// Take contacts off the blocklist: [`Unblocklisted`].
    pub struct Unblocklist {
        /// The numbers.
        pub contacts: Vec<String>,
    } -> Unblocklisted;
}

question! {
    /// Queue the alert about `contact` to every alert recipient, each paid from `business`'s
    /// wallet: [`AlertSent`].
    pub struct SendAlert {
        /// The contact the alert is about.
        pub contact: String,
        /// The outlet whose wallet pays.
        pub business: String,
        /// The clock.
        pub now: DateTime<Utc>,
    } -> AlertSent;
}

/// The brand's fraud alert settings (table `fraud_config`, row `alerts`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AlertSettings {
    /// The brand.
    pub parent_business_id: String,
    /// Who is alerted (mobile numbers).
    pub alert_recipients: Vec<String>,
    /// SMS or chat.
    pub channel_type: Channel,
    /// The message (`{contact}` is replaced by the contact).
    pub template: String,
    /// The sender.
    #[serde(default)]
    pub sender_id: Option<String>,
    /// The chat price category.
    #[serde(default)]
    pub template_type: TemplateType,
}

/// A blocklist entry (table `blocklist`, clustering the number).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BlocklistEntry {
    /// The brand.
    pub parent_business_id: String,
    /// The number.
    pub contact_number: String,
    /// Where it came from (`csv`).
    pub source: String,
    /// When it was added (RFC 3339).
    pub created_at: String,
    /// When it changed (RFC 3339).
    pub updated_at: String,
}

/// What a blocklist addition did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Blocklisted {
    /// The numbers added, in the order given.
    pub inserted: Vec<String>,
    /// The positions (in the numbers given) of those already on the list, or given before.
    pub duplicates: Vec<usize>,
    /// The store batches written.
    pub batches: usize,
}

/// What a blocklist removal did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Unblocklisted {
    /// Entries removed.
    pub deleted: usize,
}

/// What an alert send did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AlertSent {
    /// Messages queued (a replay of today's counts again, charging nothing).
    pub queued: usize,
    /// Recipients the wallet could not pay for: `(recipient, why)`.
    pub skipped: Vec<(String, String)>,
    /// Rupees charged.
    pub charged: rust_decimal::Decimal,
}

/// Numbers stored per blocklist batch.
pub const BLOCKLIST_BATCH: usize = 1000;

/// The flags a staff action changed.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FlagOutcome {
    /// The flags, as written.
    pub flags: Vec<FraudFlag>,
    /// Whether the customer is blocked now.
    pub is_blocked: bool,
}

/// A contact's fraud state.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Evaluation {
    /// The contact.
    pub contact: String,
    /// Whether the brand knows the customer.
    pub known_customer: bool,
    /// On the brand's blocklist.
    pub blocklisted: bool,
    /// Blocked by staff.
    pub is_blocked: bool,
    /// Either.
    pub blocked: bool,
    /// Open flags by id.
    pub open_flags: BTreeMap<String, FlagState>,
    /// Redemptions in the current redemption period.
    pub redemptions_in_period: u32,
    /// Point allocations in the current earning period.
    pub allocations_in_period: u32,
    /// The limits.
    pub limits: VelocityRules,
}

/// The brand's velocity limits (cached).
pub async fn velocity(tenant: &mut Tenant) -> Result<VelocityRules, StoreError> {
    if let Some(rules) = &tenant.velocity {
        return Ok(rules.clone());
    }
    let rules = tenant.repo().get(&keys::fraud_config(&tenant.id, "velocity")).await?.unwrap_or_default();
    tenant.velocity = Some(rules);
    Ok(tenant.velocity.clone().unwrap_or_default())
}

/// Whether the brand's blocklist holds `phone`.
async fn blocklisted(tenant: &Tenant, phone: &str) -> Result<bool, StoreError> {
    let key = keys::blocklist(&tenant.id, phone);
    Ok(tenant.row(&key).await?.is_some())
}

/// Blocked: by staff (a flag), or on the brand's blocklist.
pub async fn is_blocked(tenant: &Tenant, customer: &Customer) -> Result<bool, StoreError> {
    Ok(customer.is_blocked || blocklisted(tenant, &customer.phone).await?)
}

/// Raises a flag for a breach unless one of that type is already open; returns its id and the
/// write of the new flag (if any).
pub fn raise_flag(
    tenant: &Tenant,
    customer: &mut Customer,
    fraud_type: &str,
    outlet: Option<String>,
    at: DateTime<Utc>,
) -> (String, Option<WriteOp>) {
    let open = customer.flags.iter().find_map(|(id, state)| (*state == FlagState::Flagged).then_some(id.clone()));
    if let Some(id) = open.filter(|id| id.ends_with(&digest(&[fraud_type]))) {
        return (id, None);
    }
    let flag_id = format!("F{:013}-{}", at.timestamp_millis(), digest(&[fraud_type]));
    let flag = FraudFlag {
        flag_id: flag_id.clone(),
        contact: customer.phone.clone(),
        name: customer.name.clone(),
        fraud_type: fraud_type.to_owned(),
        parent_business_id: tenant.id.clone(),
        child_business_id: outlet,
        block_reason: format!("{fraud_type} exceeded"),
        blocked_by: "System".to_owned(),
        status: FlagState::Flagged.status(),
        state: FlagState::Flagged,
        comment: None,
        resolved_comment: None,
        submitted_by: None,
        created_at: at,
        updated_at: at,
    };
    customer.flags.insert(flag_id.clone(), FlagState::Flagged);
    metrics::counter!("engage_fraud_flags_total", "fraud_type" => fraud_type.to_owned()).increment(1);
    tracing::warn!(tenant = %tenant.id, fraud_type, flag_id, "velocity limit breached: flag raised");
    let op = keys::fraud_flag(&tenant.id, &flag_id).put(&flag);
    (flag_id, Some(op))
}

// Each question of the area, answered in the actor's turn.
crate::query::answers! {
    (tenant, _) let now = Utc::now();
    SetVelocity: SetVelocity { rules } => {
        tenant.batch(vec![keys::fraud_config(&tenant.id, "velocity").put(&rules)]).await?;
        tenant.velocity = Some(rules.clone());
        Ok(rules)
    },
    GetVelocity: _ => Ok(velocity(tenant).await?),
    Flag: Flag { contact, action, comment, submitted_by } => {
        flag(tenant, &contact, action, comment, submitted_by, now).await
    },
    Evaluate: Evaluate { contact } => {
        let customer = tenant.customer(&contact).await?;
        let limits = velocity(tenant).await?;
        let blocklisted = blocklisted(tenant, &contact).await?;
        let counters = customer.as_ref().map(|c| c.velocity.clone()).unwrap_or_default();
        let count = |txn, period| count_in_period(&counters, txn, period, now);
        let is_blocked = customer.as_ref().is_some_and(|c| c.is_blocked);
        Ok(Evaluation {
            known_customer: customer.is_some(),
            blocklisted,
            is_blocked,
            blocked: blocklisted || is_blocked,
            open_flags: customer.map(|c| c.flags).unwrap_or_default(),
            redemptions_in_period: count(TXN_REDEEM, limits.redemption_limit_period),
            allocations_in_period: count(TXN_EARN, limits.points_earning_limit_period),
            limits,
            contact,
        })
    },
    SaveAlerts: SaveAlerts { mut settings } => {
        settings.parent_business_id = tenant.id.clone();
        tenant.batch(vec![keys::fraud_config(&tenant.id, "alerts").put(&settings)]).await?;
        Ok(settings)
    },
    Alerts: _ => Ok(alerts(tenant).await?),
    BlocklistPage: BlocklistPage { page } => reads::blocklist_page(tenant, page).await,
    FlagPage: FlagPage { status, page } => reads::flag_page(tenant, status, page).await,
    GroupFlags: _ => reads::groups(tenant).await,
    CountFlags: CountFlags { start, end } => reads::counts(tenant, &start, &end).await,
    Blocklist: Blocklist { contacts, source, now } => {
        add_to_blocklist(tenant, contacts, &source, now).await
    },
    Unblocklist: Unblocklist { contacts } => {
        let mut ops = Vec::new();
        let contacts: std::collections::BTreeSet<String> = contacts.into_iter().collect();
        for contact in contacts {
            let key = keys::blocklist(&tenant.id, &contact);
            if tenant.row(&key).await?.is_some() {
                ops.push(key.delete());
            }
        }
        let deleted = ops.len();
        tenant.batch(ops).await?;
        Ok(Unblocklisted { deleted })
    },
    SendAlert: SendAlert { contact, business, now } => {
        send_alert(tenant, &contact, &business, now).await
    },
}

async fn alerts(tenant: &Tenant) -> Result<Option<AlertSettings>, StoreError> {
    tenant.get(&keys::fraud_config(&tenant.id, "alerts")).await
}

async fn add_to_blocklist(
    tenant: &mut Tenant,
    contacts: Vec<String>,
    source: &str,
    now: DateTime<Utc>,
) -> Result<Blocklisted, QueryError> {
    let mut done = Blocklisted::default();
    let mut seen = std::collections::HashSet::with_capacity(contacts.len());
    for (position, contact) in contacts.into_iter().enumerate() {
        if !seen.insert(contact.clone()) || tenant.row(&keys::blocklist(&tenant.id, &contact)).await?.is_some() {
            done.duplicates.push(position);
        } else {
            done.inserted.push(contact);
        }
    }
    let at = now.to_rfc3339();
    for chunk in done.inserted.chunks(BLOCKLIST_BATCH) {
        let ops = chunk
            .iter()
            .map(|contact| {
                let entry = BlocklistEntry {
                    parent_business_id: tenant.id.clone(),
                    contact_number: contact.clone(),
                    source: source.to_owned(),
                    created_at: at.clone(),
                    updated_at: at.clone(),
                };
                keys::blocklist(&tenant.id, contact).put(&entry)
            })
            .collect();
        tenant.batch(ops).await?;
        done.batches += 1;
    }
    metrics::counter!("engage_blocklist_uploaded_total").increment(done.inserted.len() as u64);
    Ok(done)
}

/// One message per alert recipient into today's (IST) channel queue, each paid from `business`'s
/// wallet (one alert per contact, recipient and day: a second send the same day charges nothing).
async fn send_alert(
    tenant: &mut Tenant,
    contact: &str,
    business: &str,
    now: DateTime<Utc>,
) -> Result<AlertSent, QueryError> {
    let Some(settings) = alerts(tenant).await? else {
        return Err(QueryError::Invalid("no fraud alert settings: configure them first".to_owned()));
    };
    let message = settings.template.replace("{contact}", contact);
    let today = crate::domain::time::ist_day(now).replace('-', "");
    let mut sent = AlertSent::default();
    for recipient in &settings.alert_recipients {
        let send = SendRequest {
            business: business.to_owned(),
            channel: settings.channel_type,
            template_type: settings.template_type,
            purpose: Purpose::FraudAlert,
            to: recipient.clone(),
            message: message.clone(),
            send_id: format!("fraud-alert-{contact}-{recipient}-{today}"),
            delivery_date: today.clone(),
            auto_id: None,
            template_id: None,
            button: None,
            sender_id: None,
            not_before: None,
        };
        match wallet::send_now(tenant, &send, Vec::new(), now).await {
            Ok(queued) => {
                sent.queued += 1;
                sent.charged +=
                    queued.charged.as_deref().and_then(|a| a.parse::<rust_decimal::Decimal>().ok()).unwrap_or_default();
            }
            Err(QueryError::Insufficient(short)) => sent.skipped.push((recipient.clone(), short.to_string())),
            Err(error) => return Err(error),
        }
    }
    Ok(sent)
}

async fn flag(
    tenant: &mut Tenant,
    contact: &str,
    action: FlagAction,
    comment: Option<String>,
    submitted_by: String,
    now: DateTime<Utc>,
) -> Result<FlagOutcome, QueryError> {
    let mut customer = tenant.known_customer(contact).await?;
    let wanted = if action == FlagAction::Unblock { FlagState::Blocked } else { FlagState::Flagged };
    let targets: Vec<String> = customer.flags.iter().filter(|(_, s)| **s == wanted).map(|(id, _)| id.clone()).collect();
    if targets.is_empty() {
        let fallback = if customer.is_blocked { FlagState::Blocked } else { FlagState::Resolved };
        let state = customer.flags.values().next().copied().unwrap_or(fallback);
        return Err(QueryError::Transition(TransitionRefused { state, action }));
    }
    let mut ops = Vec::new();
    let mut changed = Vec::new();
    for id in targets {
        let Some(state) = customer.flags.get(&id).copied() else { continue };
        let next = transition(state, action).map_err(QueryError::Transition)?;
        let Some(mut flag) = tenant.repo().get::<FraudFlag>(&keys::fraud_flag(&tenant.id, &id)).await? else {
            continue;
        };
        flag.state = next;
        flag.status = next.status();
        flag.updated_at = now;
        flag.submitted_by = Some(submitted_by.clone());
        match action {
            FlagAction::Resolve => flag.resolved_comment = comment.clone(),
            _ => flag.comment = comment.clone(),
        }
        if matches!(next, FlagState::Blocked) {
            customer.flags.insert(id.clone(), next);
        } else {
            customer.flags.remove(&id);
        }
        ops.push(keys::fraud_flag(&tenant.id, &id).put(&flag));
        changed.push(flag);
    }
    customer.is_blocked = customer.flags.values().any(|s| *s == FlagState::Blocked);
    let is_blocked = customer.is_blocked;
    tenant.commit_customer(ops, customer).await?;
    Ok(FlagOutcome { flags: changed, is_blocked })
}
