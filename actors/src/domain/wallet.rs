//! The business wallet and what sends cost (spec "Wallet pricing configuration", Limits).
//!
//! Prices come from the brand's [`Pricing`] table (stored per brand, table `wallet_pricing`), whose
//! defaults are the spec's values: digital bills SMS 0.145 (`digital_bill_sms`), chat 0.92
//! marketing (`digital_chat_cost`) or 0.25 utility (`digital_chat_cost_utility`); feedback SMS
//! 0.14, chat 0.91 marketing or 0.17 utility; GST 18% (`sms_gst`, `chat_gst`). Fraud alerts,
//! campaigns and one-time passwords have their own rows, which default to the digital-bill
//! prices (the spec prices only bills and feedback). Push has no price in the spec and costs
//! nothing by default. A debit is cost + cost × GST / 100, exact in decimal (0.145 + 18% =
//! 0.1711), never rounded, never floating point; a wallet is never debited below zero.

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

/// A delivery channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, PartialOrd, Ord, schemars::JsonSchema)]
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

/// Why a price table is refused; the text names the field.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PricingRefused {
    /// A negative price.
    #[error("{0}: prices cannot be negative")]
    Negative(&'static str),
    /// GST outside 0..=100.
    #[error("{0}: GST is a percentage from 0 to 100")]
    Gst(&'static str),
}

/// A chat template's category.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum TemplateType {
    /// Utility (cheaper chat).
    #[default]
    Utility,
    /// Marketing.
    Marketing,
}

/// Which price table applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// One-time passwords for POS redemptions.
    Otp,
}

/// What one send costs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Charge {
    /// Price before tax.
    pub cost: Decimal,
    /// GST on it.
    pub gst: Decimal,
    /// Debited: cost + GST.
    pub total: Decimal,
}

/// The prices of one purpose's sends: SMS, chat (marketing, utility) and push.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ChannelPrices {
    /// One SMS.
    pub sms: Decimal,
    /// One marketing chat message.
    pub chat: Decimal,
    /// One utility chat message.
    pub chat_utility: Decimal,
    /// One push notification.
    #[serde(default)]
    pub push: Decimal,
}

impl ChannelPrices {
    const fn digital_bill() -> Self {
        Self {
            sms: Decimal::from_parts(145, 0, 0, false, 3),
            chat: Decimal::from_parts(92, 0, 0, false, 2),
            chat_utility: Decimal::from_parts(25, 0, 0, false, 2),
            push: Decimal::ZERO,
        }
    }
}

/// A brand's price table (spec "Wallet pricing configuration"; the spec's values by default).
/// The five fields of the spec keep their names; feedback, alert, campaign and OTP prices are
/// engage's additions. Every field may be left out of a stored or submitted table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct Pricing {
    /// Digital bill by SMS (0.145).
    pub digital_bill_sms: Decimal,
    /// Digital bill by marketing chat (0.92).
    pub digital_chat_cost: Decimal,
    /// Digital bill by utility chat (0.25).
    pub digital_chat_cost_utility: Decimal,
    /// GST on SMS, percent (18).
    pub sms_gst: Decimal,
    /// GST on chat, percent (18).
    pub chat_gst: Decimal,
    /// Feedback requests (SMS 0.14, chat 0.91 marketing / 0.17 utility).
    pub feedback: ChannelPrices,
    /// Fraud alerts to the merchant (the digital-bill prices).
    pub fraud_alert: ChannelPrices,
    /// Campaigns and journeys (the digital-bill prices).
    pub campaign: ChannelPrices,
    /// One-time passwords (the digital-bill prices).
    pub otp: ChannelPrices,
}

impl Default for Pricing {
    fn default() -> Self {
        let bill = ChannelPrices::digital_bill();
        Self {
            digital_bill_sms: bill.sms,
            digital_chat_cost: bill.chat,
            digital_chat_cost_utility: bill.chat_utility,
            sms_gst: Decimal::from(18),
            chat_gst: Decimal::from(18),
            feedback: ChannelPrices {
                sms: Decimal::new(14, 2),
                chat: Decimal::new(91, 2),
                chat_utility: Decimal::new(17, 2),
                push: Decimal::ZERO,
            },
            fraud_alert: bill,
            campaign: bill,
            otp: bill,
        }
    }
}

impl Pricing {
    /// The price list of `purpose`.
    fn prices(&self, purpose: Purpose) -> ChannelPrices {
        match purpose {
            Purpose::DigitalBill => ChannelPrices {
                sms: self.digital_bill_sms,
                chat: self.digital_chat_cost,
                chat_utility: self.digital_chat_cost_utility,
                push: Decimal::ZERO,
            },
            Purpose::Feedback => self.feedback,
            Purpose::FraudAlert => self.fraud_alert,
            Purpose::Campaign => self.campaign,
            Purpose::Otp => self.otp,
        }
    }

    /// The price of one send.
    pub fn price(&self, purpose: Purpose, channel: Channel, template: TemplateType) -> Charge {
        let prices = self.prices(purpose);
        let (cost, gst_percent) = match (channel, template) {
            (Channel::Push, _) => (prices.push, Decimal::ZERO),
            (Channel::Sms, _) => (prices.sms, self.sms_gst),
            (Channel::Chat, TemplateType::Marketing) => (prices.chat, self.chat_gst),
            (Channel::Chat, TemplateType::Utility) => (prices.chat_utility, self.chat_gst),
        };
        let gst = cost * gst_percent / Decimal::ONE_HUNDRED;
        Charge { cost, gst, total: cost + gst }
    }

    /// Refuses negative prices and GST outside 0..=100.
    pub fn check(&self) -> Result<(), PricingRefused> {
        let lists = [
            ("feedback", self.feedback),
            ("fraud_alert", self.fraud_alert),
            ("campaign", self.campaign),
            ("otp", self.otp),
        ];
        let mut prices = vec![
            ("digital_bill_sms", self.digital_bill_sms),
            ("digital_chat_cost", self.digital_chat_cost),
            ("digital_chat_cost_utility", self.digital_chat_cost_utility),
        ];
        for (name, list) in lists {
            prices.extend([(name, list.sms), (name, list.chat), (name, list.chat_utility), (name, list.push)]);
        }
        if let Some((name, _)) = prices.iter().find(|(_, p)| p.is_sign_negative()) {
            return Err(PricingRefused::Negative(name));
        }
        for (name, gst) in [("sms_gst", self.sms_gst), ("chat_gst", self.chat_gst)] {
            if gst.is_sign_negative() || gst > Decimal::ONE_HUNDRED {
                return Err(PricingRefused::Gst(name));
            }
        }
        Ok(())
    }
}

/// Changes to one purpose's prices; fields left out keep their value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ChannelPricesPatch {
    /// One SMS.
    pub sms: Option<Decimal>,
    /// One marketing chat message.
    pub chat: Option<Decimal>,
    /// One utility chat message.
    pub chat_utility: Option<Decimal>,
    /// One push notification.
    pub push: Option<Decimal>,
}

impl ChannelPricesPatch {
    fn apply(self, to: ChannelPrices) -> ChannelPrices {
        ChannelPrices {
            sms: self.sms.unwrap_or(to.sms),
            chat: self.chat.unwrap_or(to.chat),
            chat_utility: self.chat_utility.unwrap_or(to.chat_utility),
            push: self.push.unwrap_or(to.push),
        }
    }
}

/// Changes to a brand's price table; fields left out keep their value. Applied by the brand's
/// actor to the table it holds, in one turn, so concurrent patches of different fields all land.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PricingPatch {
    /// Digital bill by SMS.
    pub digital_bill_sms: Option<Decimal>,
    /// Digital bill by marketing chat.
    pub digital_chat_cost: Option<Decimal>,
    /// Digital bill by utility chat.
    pub digital_chat_cost_utility: Option<Decimal>,
    /// GST on SMS, percent.
    pub sms_gst: Option<Decimal>,
    /// GST on chat, percent.
    pub chat_gst: Option<Decimal>,
    /// Feedback requests.
    #[serde(default)]
    pub feedback: ChannelPricesPatch,
    /// Fraud alerts.
    #[serde(default)]
    pub fraud_alert: ChannelPricesPatch,
    /// Campaigns and journeys.
    #[serde(default)]
    pub campaign: ChannelPricesPatch,
    /// One-time passwords.
    #[serde(default)]
    pub otp: ChannelPricesPatch,
}

impl PricingPatch {
    /// `current` with this patch's fields.
    pub fn apply(&self, current: &Pricing) -> Pricing {
        Pricing {
            digital_bill_sms: self.digital_bill_sms.unwrap_or(current.digital_bill_sms),
            digital_chat_cost: self.digital_chat_cost.unwrap_or(current.digital_chat_cost),
            digital_chat_cost_utility: self.digital_chat_cost_utility.unwrap_or(current.digital_chat_cost_utility),
            sms_gst: self.sms_gst.unwrap_or(current.sms_gst),
            chat_gst: self.chat_gst.unwrap_or(current.chat_gst),
            feedback: self.feedback.apply(current.feedback),
            fraud_alert: self.fraud_alert.apply(current.fraud_alert),
            campaign: self.campaign.apply(current.campaign),
            otp: self.otp.apply(current.otp),
        }
    }
}

/// A refused debit.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize, Deserialize, schemars::JsonSchema)]
#[error("insufficient wallet balance: {balance} < {needed}")]
pub struct InsufficientBalance {
    /// The balance.
    pub balance: Decimal,
    /// What the send costs.
    pub needed: Decimal,
}

/// A business wallet.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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
            assert_eq!(
                Pricing::default().price(purpose, channel, template).total,
                d(total),
                "{purpose:?} {channel:?} {template:?}"
            );
        }
        let sms = Pricing::default().price(DigitalBill, Sms, Utility);
        assert_eq!((sms.cost, sms.gst), (d("0.145"), d("0.0261")));
    }

    #[test]
    fn a_brand_table_overrides_the_defaults() {
        let pricing: Pricing = serde_json::from_str(r#"{"digital_bill_sms": "0.2", "sms_gst": "0", "feedback": {"sms": "0.1", "chat": "1", "chat_utility": "0.5"}}"#).unwrap();
        assert_eq!(pricing.price(Purpose::DigitalBill, Channel::Sms, TemplateType::Utility).total, d("0.2"));
        assert_eq!(pricing.price(Purpose::Feedback, Channel::Chat, TemplateType::Utility).total, d("0.59"));
        assert_eq!(pricing.price(Purpose::DigitalBill, Channel::Chat, TemplateType::Marketing).total, d("1.0856"));
        assert!(Pricing { sms_gst: d("101"), ..Pricing::default() }.check().is_err());
        assert!(Pricing { digital_chat_cost: d("-1"), ..Pricing::default() }.check().is_err());
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
