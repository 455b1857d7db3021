import { describe, expect, test } from "bun:test";
import { verify as octokitVerify } from "@octokit/webhooks-methods";
import { Webhook } from "standardwebhooks";
import { gwSignature, signedHeaders, standardSignature, verifyGwSignature } from "../../src/webhooks/sign.ts";

describe("known answers (reliability.md §1.2)", () => {
  test("GitHub's vector", () => {
    expect(gwSignature("It's a Secret to Everybody", "Hello, World!")).toBe(
      "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
    );
  });

  test("Standard Webhooks' vector (whsec_ key)", () => {
    expect(
      standardSignature(
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        "msg_p5jXN8AQM9LWM0D4loKWxJek",
        1614265330,
        '{"test": 2432232314}',
      ),
    ).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
  });
});

describe("verifiers we did not write accept our signatures", () => {
  const body = JSON.stringify({ id: "msg_01", text: "héllo 👋", attachments: [] });

  test("@octokit/webhooks-methods verifies X-GW-Signature", async () => {
    const h = signedHeaders("s3cret-value", "2b8d4c0e-1d2e-4f5a-8b9c-0d1e2f3a4b5c", 1_800_000_000, body);
    expect(await octokitVerify("s3cret-value", body, h["x-gw-signature"])).toBe(true);
    expect(await octokitVerify("other-secret", body, h["x-gw-signature"])).toBe(false);
  });

  test("the standardwebhooks library verifies the webhook-* headers (whsec_ secret)", () => {
    const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const now = Math.floor(Date.now() / 1000);
    const h = signedHeaders(secret, "2b8d4c0e-1d2e-4f5a-8b9c-0d1e2f3a4b5c", now, body);
    expect(new Webhook(secret).verify(body, h)).toEqual(JSON.parse(body));
    expect(() => new Webhook(secret).verify(`${body} `, h)).toThrow();
  });
});

test("any single-bit flip in body or signature fails verification (300 cases)", () => {
  let seed = 42;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const secret = "webhook-secret-0123456789";
  for (let i = 0; i < 300; i++) {
    const body = Buffer.from(JSON.stringify({ n: i, text: "x".repeat(rand(200)) }));
    const sig = gwSignature(secret, body);
    expect(verifyGwSignature(secret, body, sig)).toBe(true);
    const flipped = Buffer.from(body);
    const at = rand(flipped.length);
    flipped[at] = (flipped[at] as number) ^ (1 << rand(8));
    expect(verifyGwSignature(secret, flipped, sig)).toBe(false);
    const badSig = sig.slice(0, 7 + rand(64)) + (sig.at(-1) === "0" ? "1" : "0");
    expect(verifyGwSignature(secret, body, badSig)).toBe(false);
  }
  expect(verifyGwSignature(secret, "x", null)).toBe(false);
});
