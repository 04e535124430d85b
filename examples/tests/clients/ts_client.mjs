// The support desk as the official MCP TypeScript SDK's client sees it.
//
//     node ts_client.mjs stdio <support_desk binary>   # starts `support_desk --mcp --page-size 4`
//     node ts_client.mjs http <url>                     # a `support_desk --mcp-http ... --page-size 4`
//
// The SDK is imported from the installed clients that MCP_CLIENTS names (a `node_modules`
// folder; ES modules do not read NODE_PATH). Runs one session of calls and prints what it
// observed as one JSON object on stdout; the Rust test (examples/tests/mcp_typescript.rs)
// judges it. A failure is printed to stderr with a non-zero exit status.

import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";

const clients = process.env.MCP_CLIENTS;
if (!clients) {
  throw new Error("MCP_CLIENTS is not set: it names the node_modules with @modelcontextprotocol/sdk");
}

/** A module of the SDK's ES build, e.g. `client/index.js`. */
function sdk(module) {
  return import(pathToFileURL(join(clients, "@modelcontextprotocol/sdk/dist/esm", module)).href);
}

const { Client } = await sdk("client/index.js");
const { StdioClientTransport } = await sdk("client/stdio.js");
const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
const {
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
  ToolListChangedNotificationSchema,
} = await sdk("types.js");

/** What the client saw, beside what the calls answered. */
const observed = {
  elicitations: [],
  logs: [],
  notifications: [],
  // What the SDK reports as out of place: a progress report or a response for a request it
  // no longer waits for (a cancelled call's) lands here.
  errors: [],
  // What the SDK warned about on the console (its JSON Schema validator warns there when it
  // cannot read part of a tool's outputSchema).
  warnings: [],
};
console.warn = (...parts) => {
  observed.warnings.push(parts.map(String).join(" "));
};

/** A tools/call result, as facts. */
function result(answer) {
  return {
    is_error: Boolean(answer.isError),
    texts: answer.content.filter((block) => block.type === "text").map((block) => block.text),
    structured: answer.structuredContent ?? null,
  };
}

/** Calls `name` and returns its result as facts. */
async function call(client, name, args, options) {
  return result(await client.callTool({ name, arguments: args }, undefined, options));
}

function newClient() {
  const client = new Client(
    { name: "support-desk-ts-test", version: "1.0.0" },
    { capabilities: { elicitation: { form: {} } } },
  );
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    const { message, requestedSchema } = request.params;
    observed.elicitations.push({ message, schema: requestedSchema });
    if (message.includes("cancel order")) {
      return { action: "accept", content: { decision: "approve" } };
    }
    if (message.includes("page the on-call agent")) {
      return { action: "accept", content: { decision: "deny", reason: "not during the night" } };
    }
    return { action: "decline" };
  });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    observed.notifications.push(notification.method);
    observed.logs.push({ level: notification.params.level, data: notification.params.data });
  });
  client.setNotificationHandler(ToolListChangedNotificationSchema, (notification) => {
    observed.notifications.push(notification.method);
  });
  client.fallbackNotificationHandler = async (notification) => {
    observed.notifications.push(notification.method);
  };
  client.onerror = (error) => {
    observed.errors.push(String(error?.message ?? error));
  };
  return client;
}

async function sessionCalls(client, changeScope) {
  const facts = {};
  facts.server = client.getServerVersion()?.name ?? null;

  const pages = [];
  let cursor;
  for (;;) {
    const listed = await client.listTools(cursor === undefined ? undefined : { cursor });
    pages.push(listed.tools.map((tool) => tool.name));
    cursor = listed.nextCursor;
    if (!cursor) break;
  }
  facts.pages = pages;
  let annotations = {};
  for (const tool of (await client.listTools()).tools) {
    if (tool.name === "cancel_order") annotations = tool.annotations ?? {};
  }
  facts.cancel_order_annotations = annotations;

  facts.status = await call(client, "get_order_status", { order_id: "A-1024" });
  facts.invalid_arguments = await call(client, "get_order_status", { order_id: 5 });
  facts.out_of_scope = await call(client, "issue_refund", { order_id: "A-1024", amount: 5 });
  try {
    await client.callTool({ name: "no_such_tool", arguments: {} });
    facts.unknown_tool = { code: null };
  } catch (error) {
    if (!(error instanceof McpError)) throw error;
    facts.unknown_tool = { code: error.code, message: error.message };
  }

  const updates = [];
  const labelLog = "the carrier sent the label for A-1008";
  const label = await call(
    client,
    "fetch_shipping_label",
    { order_id: "A-1008" },
    { onprogress: (p) => updates.push([p.progress, p.total ?? null, p.message ?? null]) },
  );
  const logBeforeResult = observed.logs.some((log) => log.data === labelLog);
  facts.progress = { result: label, updates, log_before_result: logBeforeResult };
  // Over HTTP the log may come on the session's own stream, after the result: wait for it, so
  // that it is not taken for a log of the call cancelled next.
  for (let waited = 0; waited < 5_000; waited += 50) {
    if (observed.logs.some((log) => log.data === labelLog)) break;
    await sleep(50);
  }

  // Cancelled after its first progress report: no report, no log of the tool and no answer
  // after that (the SDK would report a late one through onerror).
  const cancelledProgress = [];
  const abort = new AbortController();
  let firstReport;
  const first = new Promise((resolve) => {
    firstReport = resolve;
  });
  const logsBefore = observed.logs.length;
  const cancelled = client
    .callTool({ name: "fetch_shipping_label", arguments: { order_id: "A-1032" } }, undefined, {
      signal: abort.signal,
      onprogress: (p) => {
        cancelledProgress.push(p.progress);
        firstReport();
      },
    })
    .then(
      () => "answered",
      (error) => `rejected: ${error?.message ?? error}`,
    );
  const waited = await Promise.race([first.then(() => true), sleep(10_000).then(() => false)]);
  if (!waited) throw new Error("no progress report within 10 s from the call to cancel");
  abort.abort("the user moved on");
  const reportsAtCancel = cancelledProgress.length;
  const errorsBefore = observed.errors.length;
  const outcome = await cancelled;
  await sleep(2_000);
  facts.cancelled = {
    outcome,
    reports_at_cancel: reportsAtCancel,
    reports_after_cancel: cancelledProgress.length - reportsAtCancel,
    logs_after_cancel: observed.logs.slice(logsBefore),
    late_messages: observed.errors.slice(errorsBefore),
    next_call: await call(client, "get_order_status", { order_id: "A-1000" }),
  };

  facts.approved = await call(client, "cancel_order", { order_id: "A-1000" });
  facts.approved_but_failed = await call(client, "cancel_order", { order_id: "A-1008" });
  facts.denied = await call(client, "escalate_to_human", {
    reason: "the customer asks for a person",
  });
  const ticket = { subject: "A-1008 arrived damaged", order_id: "A-1008" };
  facts.ticket_first = await call(client, "create_ticket", ticket);
  facts.ticket_again = await call(client, "create_ticket", ticket);
  facts.ticket_other = await call(client, "create_ticket", { subject: "A-1016 never arrived" });
  facts.elicitations = observed.elicitations;
  facts.logs = observed.logs;

  if (changeScope !== undefined) {
    changeScope("order_status");
    const narrowed = await client.listTools();
    await sleep(500);
    facts.narrowed = narrowed.tools.map((tool) => tool.name);
  }
  facts.notifications = observed.notifications;
  facts.errors = observed.errors;
  facts.warnings = observed.warnings;
  return facts;
}

async function main() {
  const [mode, target] = process.argv.slice(2);
  const client = newClient();
  let facts;
  if (mode === "stdio") {
    const transport = new StdioClientTransport({
      command: target,
      args: ["--mcp", "--page-size", "4"],
      stderr: "inherit",
    });
    await client.connect(transport);
    facts = await sessionCalls(client, undefined);
  } else if (mode === "http") {
    const headers = { "x-support-user": "ada", "x-support-roles": "agent" };
    // Every request reads the headers as they are now, so the session's scope can change.
    const withHeaders = (url, init = {}) => {
      const sent = new Headers(init.headers);
      for (const [name, value] of Object.entries(headers)) sent.set(name, value);
      return fetch(url, { ...init, headers: sent });
    };
    const transport = new StreamableHTTPClientTransport(new URL(target), { fetch: withHeaders });
    await client.connect(transport);
    facts = await sessionCalls(client, (intent) => {
      headers["x-support-intent"] = intent;
    });
  } else {
    throw new Error(`usage: ts_client.mjs stdio <binary> | http <url> (not \`${mode}\`)`);
  }
  await client.close();
  process.stdout.write(`${JSON.stringify(facts)}\n`);
}

try {
  await main();
  process.exit(0);
} catch (error) {
  process.stderr.write(`${error?.stack ?? error}\n`);
  process.exit(1);
}
