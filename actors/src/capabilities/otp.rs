//! One-time passwords for POS redemptions: generated and sent by SMS (a paid send through
//! [`super::wallet::queue_send`]), verified at most five times, and used up by one redemption.

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

use engage_storage::WriteOp;

use super::wallet::{send_now, SendRequest};
use crate::domain::time::ist_day;
use crate::domain::wallet::{Channel, Purpose, TemplateType};
use crate::keys::{self, digest};
use crate::query::{question, QueryError};
use crate::tenant_core::Tenant;

/// Most verification attempts per password.
const MAX_ATTEMPTS: u32 = 5;
/// How long a password, and the window a verified one opens, last.
const VALIDITY_MINUTES: i64 = 5;

/// One-time password queries.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "query", rename_all = "snake_case")]
pub enum OtpQuery {
    /// See [`Generate`].
    Generate(Generate),
    /// See [`Verify`].
    Verify(Verify),
}

question! {
    /// Create a one-time password and queue it by SMS, paid by `business`'s wallet: [`Generated`].
    pub struct Generate {
        /// Customer phone.
        pub phone: String,
        /// The outlet whose wallet pays for the SMS.
        pub business: String,
    } -> Generated;
}

question! {
    /// Check a one-time password; a correct one opens a 5-minute window for one POS redemption:
    /// [`Verified`].
    pub struct Verify {
        /// Customer phone.
        pub phone: String,
        /// The password.
        pub otp: String,
    } -> Verified;
}

/// The row of a customer's current password (table `loyalty_otps`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct OtpRow {
    /// Digest of the password; `None` once used.
    pub hash: Option<String>,
    /// When the password expires.
    pub expires_at: DateTime<Utc>,
    /// Verification attempts so far.
    pub attempts: u32,
    /// A verified password's redemption window.
    pub verified_until: Option<DateTime<Utc>>,
}

/// A generated password's answer (the password itself only goes by SMS).
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Generated {
    /// When it expires (RFC 3339).
    pub expires_at: String,
}

/// A verification's answer.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Verified {
    /// Always true (a wrong password is an error).
    pub verified: bool,
    /// End of the redemption window (RFC 3339).
    pub valid_until: Option<String>,
}

fn hash(tenant: &Tenant, phone: &str, otp: &str) -> String {
    digest(&[&tenant.id, phone, "otp", otp])
}

async fn row(tenant: &Tenant, phone: &str) -> Result<OtpRow, QueryError> {
    tenant
        .repo()
        .get(&keys::otp(&tenant.id, phone))
        .await?
        .ok_or_else(|| QueryError::Otp("no one-time password was generated".into()))
}

/// Verifies `otp` against `row` (counting the attempt).
fn check(tenant: &Tenant, phone: &str, otp: &str, row: &mut OtpRow, now: DateTime<Utc>) -> Result<(), QueryError> {
    if row.hash.is_none() || row.expires_at <= now {
        return Err(QueryError::Otp("expired or already used; generate a new one".into()));
    }
    if row.attempts >= MAX_ATTEMPTS {
        return Err(QueryError::Otp("too many attempts; generate a new one".into()));
    }
    row.attempts += 1;
    if row.hash.as_deref() != Some(hash(tenant, phone, otp).as_str()) {
        return Err(QueryError::Otp("incorrect".into()));
    }
    Ok(())
}

/// Checks `otp` (or an open verification window) for a redemption and returns the write that
/// uses it up.
pub async fn consume(
    tenant: &Tenant,
    phone: &str,
    otp: Option<&str>,
    now: DateTime<Utc>,
) -> Result<WriteOp, QueryError> {
    let mut row = row(tenant, phone).await?;
    if row.verified_until.is_some_and(|until| until > now) {
        row.verified_until = None;
        return Ok(keys::otp(&tenant.id, phone).put(&row));
    }
    let otp = otp.ok_or_else(|| QueryError::Otp("required for this brand's POS redemptions".into()))?;
    check(tenant, phone, otp, &mut row, now)?;
    row.hash = None;
    Ok(keys::otp(&tenant.id, phone).put(&row))
}

// Each question of the area, answered in the actor's turn.
crate::query::answers! {
    (tenant, _) let now = Utc::now();
    Generate: Generate { phone, business } => {
        tenant.known_customer(&phone).await?;
        let otp = format!("{:06}", uuid::Uuid::new_v4().as_u128() % 1_000_000);
        let expires_at = now + Duration::minutes(VALIDITY_MINUTES);
        let row = OtpRow { hash: Some(hash(tenant, &phone, &otp)), expires_at, attempts: 0, verified_until: None };
        // the SMS is a paid send: the wallet debit, the queue row and the OTP row in one batch
        let send = SendRequest {
            business,
            channel: Channel::Sms,
            template_type: TemplateType::Utility,
            purpose: Purpose::Otp,
            message: format!("Your loyalty redemption code is {otp}. It expires in {VALIDITY_MINUTES} minutes."),
            send_id: format!("otp-{}", digest(&[&phone, &expires_at.to_rfc3339()])),
            to: phone.clone(),
            delivery_date: ist_day(now).replace('-', ""),
            auto_id: None,
            template_id: None,
            button: None,
            sender_id: None,
            not_before: None,
        };
        send_now(tenant, &send, vec![keys::otp(&tenant.id, &phone).put(&row)], now).await?;
        Ok(Generated { expires_at: expires_at.to_rfc3339() })
    },
    Verify: Verify { phone, otp } => {
        let mut row = row(tenant, &phone).await?;
        let checked = check(tenant, &phone, &otp, &mut row, now);
        if checked.is_ok() {
            row.hash = None;
            row.verified_until = Some(now + Duration::minutes(VALIDITY_MINUTES));
        }
        tenant.batch(vec![keys::otp(&tenant.id, &phone).put(&row)]).await?;
        checked?;
        Ok(Verified { verified: true, valid_until: row.verified_until.map(|t| t.to_rfc3339()) })
    },
}
