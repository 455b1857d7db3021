/**
 * Which macOS release wrote a chat.db, told from the columns of its `message` table (pure; chatdb.md §2.2
 * and the six dumps of shared/fixtures/chatdb/versions). Each release is known by the columns it added, and
 * the newest release with any of them present wins, so a file with a column more or less than its dump
 * still gets its family. A file with macOS 26's columns and `message` columns no known release has is
 * reported as possibly newer than macOS 26; a file with none of the markers reads as Big Sur or older.
 */

export interface Release {
  /** Stable id: the release's name in shared/fixtures/chatdb/versions, or "unknown". */
  id: "big-sur" | "monterey" | "ventura" | "sonoma" | "sequoia" | "tahoe" | "unknown";
  /** For people: "macOS 15 Sequoia". */
  name: string;
}

const words = (s: string): readonly string[] => s.trim().split(/\s+/);

/** Big Sur's 74 `message` columns (BlueBubbles' big-sur/message.sql). */
const BIG_SUR = words(`
  ROWID guid text replace service_center handle_id subject country attributedBody version type service account
  account_guid error date date_read date_delivered is_delivered is_finished is_emote is_from_me is_empty
  is_delayed is_auto_reply is_prepared is_read is_system_message is_sent has_dd_results is_service_message
  is_forward was_downgraded is_archive cache_has_attachments cache_roomnames was_data_detected was_deduplicated
  is_audio_message is_played date_played item_type other_handle group_title group_action_type share_status
  share_direction is_expirable expire_state message_action_type message_source associated_message_guid
  associated_message_type balloon_bundle_id payload_data expressive_send_style_id
  associated_message_range_location associated_message_range_length time_expressive_send_played
  message_summary_info ck_sync_state ck_record_id ck_record_change_tag destination_caller_id sr_ck_sync_state
  sr_ck_record_id sr_ck_record_change_tag is_corrupt reply_to_guid sort_id is_spam has_unseen_mention
  thread_originator_guid thread_originator_part`);

/**
 * The `message` columns each release added, newest first. Monterey's dump lacks the three `sr_ck_*`
 * columns that Big Sur's and Ventura's have (two dumps of one era disagree), so they mark no release;
 * Tahoe drops them too, which is why they are not used either way.
 */
const ADDED: readonly { release: Release; columns: readonly string[] }[] = [
  {
    release: { id: "tahoe", name: "macOS 26 Tahoe" },
    columns: words("date_recovered is_time_sensitive ck_chat_id index_state"),
  },
  {
    release: { id: "sequoia", name: "macOS 15 Sequoia" },
    columns: words(
      "associated_message_emoji is_pending_satellite_send needs_relay schedule_type schedule_state sent_or_received_off_grid",
    ),
  },
  {
    release: { id: "sonoma", name: "macOS 14 Sonoma" },
    columns: words("is_stewie is_kt_verified is_sos is_critical bia_reference_id fallback_hash"),
  },
  {
    release: { id: "ventura", name: "macOS 13 Ventura" },
    columns: words("date_retracted date_edited was_detonated part_count"),
  },
  {
    release: { id: "monterey", name: "macOS 12 Monterey" },
    columns: words("syndication_ranges synced_syndication_ranges was_delivered_quietly did_notify_recipient"),
  },
];

/** Columns seen on real files beside the dumps' (chatdb.md §2.2: `filter_action` on some newer files). */
const SEEN_ELSEWHERE = words("filter_action");

const KNOWN: ReadonlySet<string> = new Set([
  ...BIG_SUR,
  ...ADDED.flatMap((a) => a.columns),
  ...SEEN_ELSEWHERE,
]);

const BIG_SUR_OR_OLDER: Release = { id: "big-sur", name: "macOS 11 Big Sur or older" };
const NEWER: Release = { id: "unknown", name: "unknown (newer than macOS 26?)" };

/** The release family whose `message` table has these columns. */
export function releaseOf(messageColumns: Iterable<string>): Release {
  const have = new Set(messageColumns);
  const newest = ADDED.find((a) => a.columns.some((c) => have.has(c)));
  if (!newest) return BIG_SUR_OR_OLDER;
  if (newest.release.id === "tahoe" && [...have].some((c) => !KNOWN.has(c))) return NEWER;
  return newest.release;
}

/** The schema in a few words for `gw doctor`: "macOS 15 Sequoia schema, 94 message columns". */
export function describeSchema(messageColumns: Iterable<string>): string {
  const have = new Set(messageColumns);
  const release = releaseOf(have);
  const count = `${have.size} message columns`;
  return release.id === "unknown"
    ? `schema of an unknown release (newer than macOS 26?), ${count}`
    : `${release.name} schema, ${count}`;
}
