import { describe, expect, test } from "bun:test";
import { pathOf } from "../../src/core/http-edge.ts";
import { requiresAgentId } from "../../src/http/agent-id.ts";

describe("requiresAgentId", () => {
  test.each([
    ["GET", "/messages/unread", true],
    ["GET", "/messages/unread/", true],
    ["HEAD", "/messages/unread", true],
    ["get", "/messages/context", true],
    ["GET", "/messages/msg_01ARZ3NDEKTSV4RRFFQ69G5FAV", true],
    ["GET", "/messages/{message_id}", true],
    ["POST", "/messages/mark_read", true],
    ["post", "/messages/mark_read/", true],
    ["GET", "/messages/quarantine", false],
    ["GET", "/messages/quarantine/", false],
    ["POST", "/messages/send", false],
    ["GET", "/messages/a/b", false],
    ["GET", "/attachments/att_x", false],
    ["DELETE", "/messages/unread", false],
    ["GET", "/healthz", false],
  ])("%s %s → %p", (method, path, expected) => {
    expect(requiresAgentId(method, path)).toBe(expected);
  });
});

describe("pathOf slices the path as the router does", () => {
  test.each([
    ["http://127.0.0.1:8080/messages/unread?limit=20", "/messages/unread"],
    ["http://localhost/messages/unread", "/messages/unread"],
    ["http://[::1]:8080/healthz?x=/y", "/healthz"],
    ["http://h/messages/unread/?a=1", "/messages/unread/"],
    ["http://h/", "/"],
    ["http://h", "/"],
  ])("%s → %s", (url, path) => {
    expect(pathOf(url)).toBe(path);
  });
});
