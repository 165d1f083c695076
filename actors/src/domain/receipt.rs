//! Delivery receipts (`docs/senders.md`, "Receipts"): what a provider's status of a message means
//! for its send, and how a send is named in what the provider echoes back (Twilio's
//! `StatusCallback` URL, WhatsApp's `biz_opaque_callback_data`), so that a receipt finds its queue
//! row without an index.

use serde::{Deserialize, Serialize};

/// What a receipt says of a sent message, in the order they move: sent, delivered, read; failed
/// only while it is merely sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Receipt {
    /// Accepted or sent on by the provider (changes nothing: the drain said so already).
    Sent,
    /// On the customer's device.
    Delivered,
    /// Read (WhatsApp).
    Read,
    /// The provider could not deliver it (`undelivered`, `failed`).
    Failed,
}

impl Receipt {
    /// A Twilio `MessageStatus` (`queued`, `sending`, `sent`, `delivered`, `read`,
    /// `undelivered`, `failed`, …); `None` for one this does not know.
    pub fn twilio(status: &str) -> Option<Self> {
        match status {
            "accepted" | "scheduled" | "queued" | "sending" | "sent" => Some(Self::Sent),
            "delivered" => Some(Self::Delivered),
            "read" => Some(Self::Read),
            "undelivered" | "failed" | "canceled" => Some(Self::Failed),
            _ => None,
        }
    }

    /// A WhatsApp Cloud `statuses[].status` (`sent`, `delivered`, `read`, `failed`).
    pub fn whatsapp(status: &str) -> Option<Self> {
        match status {
            "sent" => Some(Self::Sent),
            "delivered" => Some(Self::Delivered),
            "read" => Some(Self::Read),
            "failed" => Some(Self::Failed),
            _ => None,
        }
    }

    /// Its name, as the send's `delivery_status`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Sent => "sent",
            Self::Delivered => "delivered",
            Self::Read => "read",
            Self::Failed => "failed",
        }
    }

    /// Whether it moves a send whose `delivery_status` is `current` on: only forward (a late
    /// `delivered` after `read` changes nothing), and a failure only of a message merely sent.
    pub fn moves(self, current: Option<&str>) -> bool {
        let rank = |status: Option<&str>| match status {
            Some("sent") => Some(0),
            Some("delivered") => Some(1),
            Some("read") => Some(2),
            _ => None,
        };
        match (self, rank(current)) {
            (Self::Failed, Some(0)) => true,
            (Self::Failed, _) | (_, None) => false,
            (moving, Some(now)) => rank(Some(moving.name())).is_some_and(|next| next > now),
        }
    }
}

/// A queued send as a provider echoes it back: its queue partition (`sms_20261129`) and send id.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SendRef {
    /// `<channel queue>_<YYYYMMDD>`.
    pub queue: String,
    /// The send id.
    pub send_id: String,
}

impl SendRef {
    /// As WhatsApp's `biz_opaque_callback_data`: `<queue>/<send id>` (at most 512 characters).
    pub fn callback_data(&self) -> String {
        format!("{}/{}", self.queue, self.send_id)
    }

    /// From [`Self::callback_data`]; `None` for anything else (a message sent before receipts
    /// were kept, or by another system).
    pub fn parse(data: &str) -> Option<Self> {
        let (queue, send_id) = data.split_once('/')?;
        let (channel, day) = queue.rsplit_once('_')?;
        let known = matches!(channel, "sms_queue" | "chat_queue" | "push_queue");
        (known && day.len() == 8 && day.bytes().all(|b| b.is_ascii_digit()) && !send_id.is_empty())
            .then(|| Self { queue: queue.to_owned(), send_id: send_id.to_owned() })
    }

    /// The channel queue and the delivery day (`YYYYMMDD`).
    pub fn parts(&self) -> (&str, &str) {
        self.queue.rsplit_once('_').unwrap_or((self.queue.as_str(), ""))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn receipts_only_move_a_send_forward() {
        assert!(Receipt::Delivered.moves(Some("sent")));
        assert!(Receipt::Read.moves(Some("sent")) && Receipt::Read.moves(Some("delivered")));
        assert!(!Receipt::Delivered.moves(Some("read")), "a late delivered after read");
        assert!(!Receipt::Sent.moves(Some("sent")));
        assert!(Receipt::Failed.moves(Some("sent")));
        assert!(!Receipt::Failed.moves(Some("delivered")), "delivered stays delivered");
        assert!(!Receipt::Delivered.moves(None), "a send not sent yet is the drain's");
        assert!(!Receipt::Delivered.moves(Some("failed")));
        assert_eq!(Receipt::twilio("undelivered"), Some(Receipt::Failed));
        assert_eq!(Receipt::twilio("bogus"), None);
        assert_eq!(Receipt::whatsapp("read"), Some(Receipt::Read));
    }

    #[test]
    fn a_send_ref_reads_back_only_what_it_wrote() {
        let sent = SendRef { queue: "chat_queue_20261129".into(), send_id: "bulk-1-9811800001".into() };
        assert_eq!(SendRef::parse(&sent.callback_data()), Some(sent.clone()));
        assert_eq!(sent.parts(), ("chat_queue", "20261129"));
        for bad in ["", "chat_queue_20261129", "other_20261129/x", "chat_queue_2026/x", "chat_queue_20261129/"] {
            assert_eq!(SendRef::parse(bad), None, "{bad}");
        }
    }
}
