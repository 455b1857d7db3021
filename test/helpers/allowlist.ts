/**
 * The tests' allowlist file: Ann is allowlisted on both platforms as person "ann", her phone number and
 * a Discord user id; `allowBob` adds Bob's Discord user id as person "bob". For the tests and the chaos
 * runs; imports nothing of bun:test.
 */

export const allowAnn = (discordUserId: string) => `
[[entry]]
source = "device_messenger"
id = "+15555550100"
person_id = "ann"
display_name = "Ann"
[[entry]]
source = "community_chat"
id = "${discordUserId}"
person_id = "ann"
`;

export const allowBob = (discordUserId: string) => `
[[entry]]
source = "community_chat"
id = "${discordUserId}"
person_id = "bob"
`;
