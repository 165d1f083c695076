//! The business wallet and what sends cost (spec "Wallet pricing configuration", Limits).
//!
//! Prices: digital bills SMS 0.145, chat 0.92 (marketing) or 0.25 (utility); feedback SMS 0.14,
//! chat 0.17 (utility) or 0.91 (marketing); GST 18% on each. Fraud alerts and other sends use the
//! digital-bill table (the wallet pricing configuration's fields are the digital-bill ones). Push
//! has no price in the spec and costs nothing. A debit is cost + cost × GST / 100, exact in
//! decimal (0.145 + 18% = 0.1711), never rounded, never floating point; a wallet is never debited
//! below zero.

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

/// A delivery channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Channel {
    /// SMS.
    Sms,
    /// Chat.
    Chat,
    /// Push notification.
    Push,
}

impl Channel {
    /// The queue name prefix: `sms_queue`, `chat_queue`, `push_queue`.
    pub fn queue(self) -> &'static str {
        match self {
            Channel::Sms => "sms_queue",
            Channel::Chat => "chat_queue",
            Channel::Push => "push_queue",
        }
    }
}

/// A chat template's category.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "UPPERCASE")]
pub enum TemplateType {
    /// Utility (cheaper chat).
    #[default]
    Utility,
    /// Marketing.
    Marketing,
}

/// Which price table applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Purpose {
    /// Digital bills.
    DigitalBill,
    /// Feedback requests.
    Feedback,
    /// Fraud alerts to the merchant.
    FraudAlert,
    /// Campaigns and journeys.
    Campaign,
}

/// What one send costs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Charge {
    /// Price before tax.
    pub cost: Decimal,
    /// GST on it.
    pub gst: Decimal,
    /// Debited: cost + GST.
    pub total: Decimal,
}

fn dec(mantissa: i64, scale: u32) -> Decimal {
    Decimal::new(mantissa, scale)
}

/// The price of one send.
pub fn price(purpose: Purpose, channel: Channel, template: TemplateType) -> Charge {
    let gst_percent = dec(18, 0);
    let cost = match (purpose, channel, template) {
        (_, Channel::Push, _) => Decimal::ZERO,
        (Purpose::Feedback, Channel::Sms, _) => dec(14, 2),
        (Purpose::Feedback, Channel::Chat, TemplateType::Utility) => dec(17, 2),
        (Purpose::Feedback, Channel::Chat, TemplateType::Marketing) => dec(91, 2),
        (_, Channel::Sms, _) => dec(145, 3),
        (_, Channel::Chat, TemplateType::Marketing) => dec(92, 2),
        (_, Channel::Chat, TemplateType::Utility) => dec(25, 2),
    };
    let gst = cost * gst_percent / Decimal::ONE_HUNDRED;
    Charge { cost, gst, total: cost + gst }
}

/// A refused debit.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[error("insufficient wallet balance: {balance} < {needed}")]
pub struct InsufficientBalance {
    /// The balance.
    pub balance: Decimal,
    /// What the send costs.
    pub needed: Decimal,
}

/// A business wallet.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Wallet {
    /// Balance (never negative).
    pub balance: Decimal,
    /// Transactions written; the next one's key.
    pub txn_seq: u64,
}

impl Wallet {
    /// Takes `amount` if the balance covers it.
    pub fn debit(&mut self, amount: Decimal) -> Result<(), InsufficientBalance> {
        if amount > self.balance {
            return Err(InsufficientBalance { balance: self.balance, needed: amount });
        }
        self.balance -= amount;
        Ok(())
    }

    /// Adds `amount`.
    pub fn credit(&mut self, amount: Decimal) {
        self.balance += amount;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    fn d(text: &str) -> Decimal {
        Decimal::from_str(text).unwrap()
    }

    #[test]
    fn prices_with_gst_are_exact() {
        use Channel::*;
        use Purpose::*;
        use TemplateType::*;
        let cases = [
            (DigitalBill, Sms, Utility, "0.1711"),
            (DigitalBill, Chat, Marketing, "1.0856"),
            (DigitalBill, Chat, Utility, "0.295"),
            (Feedback, Sms, Utility, "0.1652"),
            (Feedback, Chat, Utility, "0.2006"),
            (Feedback, Chat, Marketing, "1.0738"),
            (FraudAlert, Sms, Utility, "0.1711"),
            (Campaign, Push, Marketing, "0"),
        ];
        for (purpose, channel, template, total) in cases {
            assert_eq!(price(purpose, channel, template).total, d(total), "{purpose:?} {channel:?} {template:?}");
        }
        let sms = price(DigitalBill, Sms, Utility);
        assert_eq!((sms.cost, sms.gst), (d("0.145"), d("0.0261")));
    }

    #[test]
    fn a_wallet_never_goes_negative() {
        let mut wallet = Wallet { balance: d("0.3422"), txn_seq: 0 };
        assert!(wallet.debit(d("0.1711")).is_ok());
        assert!(wallet.debit(d("0.1711")).is_ok());
        assert_eq!(wallet.balance, Decimal::ZERO);
        assert_eq!(wallet.debit(d("0.0001")), Err(InsufficientBalance { balance: Decimal::ZERO, needed: d("0.0001") }));
    }
}
