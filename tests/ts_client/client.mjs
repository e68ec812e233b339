// The official TypeScript MCP client against our server: reads a JSON plan
// {command, args, env, calls: [{name, arguments}]} (or {url, headers, calls} for `serve --http`) on stdin,
// prints a JSON transcript.
// A call the client library throws on is recorded as {thrown: message}: the test asserts there are none.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const plan = JSON.parse(Buffer.concat(chunks).toString("utf8"));

const transport = plan.url
  ? new StreamableHTTPClientTransport(new URL(plan.url), { requestInit: { headers: plan.headers ?? {} } })
  : new StdioClientTransport({ command: plan.command, args: plan.args, env: plan.env, cwd: plan.cwd,
                               stderr: "inherit" });
const client = new Client({ name: "datalog-memory-tests", version: "1.0.0" });
await client.connect(transport);
const out = { server: client.getServerVersion(), capabilities: client.getServerCapabilities(), calls: [] };
out.tools = (await client.listTools()).tools.map((t) => t.name);
for (const call of plan.calls) {
  try {
    const result = await client.callTool({ name: call.name, arguments: call.arguments });
    out.calls.push({ name: call.name, isError: result.isError === true, text: result.content[0].text,
                     structured: result.structuredContent ?? null, meta: result._meta ?? null });
  } catch (error) {
    out.calls.push({ name: call.name, thrown: String(error && error.message || error), code: error && error.code });
  }
}
const listed = await client.listResources();
out.resources = listed.resources.map((r) => r.uri);
out.read = {};
for (const uri of plan.read ?? []) {
  try {
    out.read[uri] = (await client.readResource({ uri })).contents[0].text;
  } catch (error) {
    out.read[uri] = { thrown: String(error && error.message || error), code: error && error.code };
  }
}
await client.close();
process.stdout.write(JSON.stringify(out));
