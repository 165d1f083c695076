//! A customer's marketing consent, per brand and per channel, and which sends need it.
//!
//! | send | kind | consent checked |
//! |---|---|---|
//! | journeys, bulk campaigns, abandoned-cart nudges (purpose `campaign`) | marketing | yes |
//! | any send whose template type is `MARKETING` (feedback promos, recovery coupons, a chat bill on a marketing template) | marketing | yes |
//! | digital bills, feedback requests, refund notices on a `UTILITY` template | transactional | no |
//! | one-time passwords, fraud alerts to the brand's own staff | transactional | no |
//!
//! A marketing send is checked when it is queued (inside the brand's actor: not queued, nothing
//! debited) and again when the drain is about to deliver it (withdrawn since: not delivered, its
//! debit credited back). A customer with no recorded choice for a channel has the brand's
//! default (subscribed unless the brand says otherwise).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::domain::wallet::{Channel, Purpose, TemplateType};

/// How a subscription changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The customer confirmed on the page of a message's opt-out link.
    Link,
    /// The customer replied a keyword (STOP, START) to an SMS or chat message.
    Keyword,
    /// The brand's staff (dashboard or staff route).
    Staff,
    /// The brand's systems (integration route).
    Api,
    /// A CSV upload of opt-outs.
    Import,
}

/// One channel's recorded choice.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Choice {
    /// Whether marketing may be sent.
    pub subscribed: bool,
    /// When it was recorded.
    pub at: DateTime<Utc>,
    /// How.
    pub source: Source,
}

/// A customer's recorded choices in one brand (row `consent`, partition the brand, clustering the
/// phone). A channel without one has the brand's default.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Subscriptions {
    /// SMS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sms: Option<Choice>,
    /// Chat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat: Option<Choice>,
    /// Push.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push: Option<Choice>,
}

impl Subscriptions {
    fn slot(&mut self, channel: Channel) -> &mut Option<Choice> {
        match channel {
            Channel::Sms => &mut self.sms,
            Channel::Chat => &mut self.chat,
            Channel::Push => &mut self.push,
        }
    }

    /// The recorded choice for `channel`, if any.
    pub fn choice(&self, channel: Channel) -> Option<&Choice> {
        match channel {
            Channel::Sms => self.sms.as_ref(),
            Channel::Chat => self.chat.as_ref(),
            Channel::Push => self.push.as_ref(),
        }
    }

    /// Whether marketing may go to the customer on `channel`.
    pub fn subscribed(&self, channel: Channel, defaults: &ConsentDefaults) -> bool {
        self.choice(channel).map_or(defaults.of(channel), |c| c.subscribed)
    }

    /// Records `subscribed` for `channel`; whether it changed anything (setting what is already
    /// recorded keeps the first record: idempotent).
    pub fn set(&mut self, channel: Channel, subscribed: bool, source: Source, at: DateTime<Utc>) -> bool {
        let slot = self.slot(channel);
        if slot.as_ref().is_some_and(|c| c.subscribed == subscribed) {
            return false;
        }
        *slot = Some(Choice { subscribed, at, source });
        true
    }
}

/// A brand's defaults: whether a customer with no recorded choice may get marketing on each
/// channel, and the answer to the HELP keyword.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ConsentDefaults {
    /// SMS (default true).
    pub sms: bool,
    /// Chat (default true).
    pub chat: bool,
    /// Push (default true).
    pub push: bool,
    /// What a customer who sends HELP is answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub help_text: Option<String>,
}

impl Default for ConsentDefaults {
    fn default() -> Self {
        Self { sms: true, chat: true, push: true, help_text: None }
    }
}

impl ConsentDefaults {
    /// The default of `channel`.
    pub fn of(&self, channel: Channel) -> bool {
        match channel {
            Channel::Sms => self.sms,
            Channel::Chat => self.chat,
            Channel::Push => self.push,
        }
    }
}

/// Whether a send of `purpose` on a `template` template is marketing (needs consent); see the
/// module's table.
pub fn is_marketing(purpose: Purpose, template: TemplateType) -> bool {
    match purpose {
        Purpose::Campaign => true,
        Purpose::Otp | Purpose::FraudAlert => false,
        Purpose::DigitalBill | Purpose::Feedback => template == TemplateType::Marketing,
    }
}

/// What an inbound message asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Keyword {
    /// STOP, STOP ALL, STOPALL, UNSUBSCRIBE, CANCEL, END, QUIT, OPT OUT, OPTOUT, OPT-OUT, REVOKE.
    Stop,
    /// START, UNSTOP, SUBSCRIBE, OPT IN, OPTIN, OPT-IN, YES.
    Start,
    /// HELP, INFO.
    Help,
}

impl Keyword {
    /// The keyword `text` is, with case, spacing and trailing punctuation forgiven (`" Stop! "`,
    /// `"opt  out"`); `None` for any other message.
    pub fn of(text: &str) -> Option<Self> {
        let words: Vec<String> = text
            .split_whitespace()
            .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()).to_uppercase())
            .filter(|w| !w.is_empty())
            .collect();
        match words.join(" ").as_str() {
            "STOP" | "STOP ALL" | "STOPALL" | "UNSUBSCRIBE" | "CANCEL" | "END" | "QUIT" | "OPT OUT" | "OPTOUT"
            | "OPT-OUT" | "REVOKE" => Some(Keyword::Stop),
            "START" | "UNSTOP" | "SUBSCRIBE" | "OPT IN" | "OPTIN" | "OPT-IN" | "YES" => Some(Keyword::Start),
            "HELP" | "INFO" => Some(Keyword::Help),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keywords_forgive_case_spacing_and_punctuation_and_nothing_else_is_one() {
        for (text, keyword) in [
            ("STOP", Some(Keyword::Stop)),
            ("  stop! ", Some(Keyword::Stop)),
            ("Opt   Out", Some(Keyword::Stop)),
            ("unsubscribe.", Some(Keyword::Stop)),
            ("Revoke", Some(Keyword::Stop)),
            ("opt-out", Some(Keyword::Stop)),
            ("OPT-OUT!", Some(Keyword::Stop)),
            ("opt-in", Some(Keyword::Start)),
            ("stop-all", None),
            ("start", Some(Keyword::Start)),
            ("Help?", Some(Keyword::Help)),
            ("stop sending me offers", None),
            ("", None),
            ("thanks", None),
        ] {
            assert_eq!(Keyword::of(text), keyword, "{text:?}");
        }
    }

    #[test]
    fn a_choice_overrides_the_default_and_setting_it_again_changes_nothing() {
        let defaults = ConsentDefaults::default();
        let mut subs = Subscriptions::default();
        assert!(subs.subscribed(Channel::Sms, &defaults));
        let at = Utc::now();
        assert!(subs.set(Channel::Sms, false, Source::Keyword, at));
        assert!(!subs.set(Channel::Sms, false, Source::Link, at + chrono::Duration::seconds(5)));
        assert_eq!(subs.sms.as_ref().map(|c| c.source), Some(Source::Keyword));
        assert!(!subs.subscribed(Channel::Sms, &defaults));
        assert!(subs.subscribed(Channel::Chat, &defaults));
        let closed = ConsentDefaults { chat: false, ..ConsentDefaults::default() };
        assert!(!subs.subscribed(Channel::Chat, &closed));
    }

    #[test]
    fn only_marketing_needs_consent() {
        assert!(is_marketing(Purpose::Campaign, TemplateType::Utility));
        assert!(is_marketing(Purpose::Feedback, TemplateType::Marketing));
        assert!(!is_marketing(Purpose::DigitalBill, TemplateType::Utility));
        assert!(!is_marketing(Purpose::Feedback, TemplateType::Utility));
        assert!(!is_marketing(Purpose::Otp, TemplateType::Marketing));
        assert!(!is_marketing(Purpose::FraudAlert, TemplateType::Marketing));
    }
}
