"use strict";
// toolfleet dashboard: plain JS over the JSON API.
const $ = (sel) => document.querySelector(sel);
const el = (tag, attrs = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v; else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child ?? "")));
  return node;
};
async function api(path, options = {}, retried = false) {
  const headers = { "content-type": "application/json" };
  const key = localStorage.getItem("toolfleet-key");
  if (key) headers.authorization = `Bearer ${key}`;
  const response = await fetch(path, { headers, ...options });
  const body = response.headers.get("content-type")?.includes("json") ? await response.json() : await response.text();
  if (response.status === 401 && !retried) {
    const entered = prompt("This toolfleet needs an API key (toolfleet keys create ...):");
    if (entered) { localStorage.setItem("toolfleet-key", entered.trim()); return api(path, options, true); }
  }
  if (!response.ok) throw new Error(body.detail || JSON.stringify(body));
  return body;
}
let TOOLS = [];

async function loadTools() {
  const { tools } = await api("/api/form/tools");
  TOOLS = tools;
  const list = $("#tool-list");
  list.replaceChildren();
  const byCategory = {};
  for (const t of tools) (byCategory[t.category] ??= []).push(t);
  for (const [category, items] of Object.entries(byCategory).sort()) {
    list.append(el("div", { class: "category", style: "grid-column: 1 / -1" }, category));
    for (const t of items) {
      const where = t.available ? `runs on: ${t.hosts.join(", ")}` :
        (t.missing_env.length ? `missing env: ${t.missing_env.join(", ")}` : (t.unavailable_reason || "unavailable"));
      list.append(el("div", { class: "tool", "data-tool": t.name },
        el("h3", {}, t.name, el("span", { class: `badge ${t.availability}` }, t.available ? "available" : "unavailable")),
        el("p", {}, t.description),
        el("p", {}, `actions: ${t.actions.join(", ")} · v${t.version}`),
        el("p", {}, where),
        el("button", { type: "button", onclick: () => showSource(t.name, false) }, "source"), " ",
        ...(t.run_type === "sandboxed" ? [el("button", { type: "button", onclick: () => showSource(t.name, true) }, "edit"), " "] : []),
        el("button", { type: "button", onclick: () => pickTool(t.name) }, "run")));
    }
  }
  const select = $("#run-tool");
  const current = select.value;
  select.replaceChildren(...tools.map((t) => el("option", { value: t.name }, t.name)));
  if (current) select.value = current;
  renderActions();
}

async function showSource(name, edit) {
  const body = await api(`/api/form/tools/${name}/code`);
  $("#source-title").textContent = `${name} — ${body.module || "runtime tool"} v${body.version}`;
  $("#source-code").textContent = body.code || "(no source on this server)";
  $("#source-code").hidden = edit;
  $("#source-edit").hidden = !edit;
  $("#source-save").hidden = !edit;
  $("#source-edit").value = body.code || "";
  $("#source-message").textContent = "";
  $("#source-save").onclick = async () => {
    try {
      const saved = await api(`/api/form/tools/${name}`, { method: "PUT", body: JSON.stringify({ code: $("#source-edit").value }) });
      $("#source-message").textContent = `saved: ${name} is now version ${saved.version}`;
      $("#source-message").className = "status-succeeded";
      loadTools();
    } catch (err) {
      $("#source-message").textContent = err.message;
      $("#source-message").className = "status-failed";
    }
  };
  $("#source-dialog").showModal();
}

function pickTool(name) {
  $("#run-tool").value = name;
  renderActions();
  location.hash = "#run";
}

function renderActions() {
  const tool = TOOLS.find((t) => t.name === $("#run-tool").value);
  const select = $("#run-action");
  select.replaceChildren(...(tool?.actions ?? []).map((a) => el("option", { value: a }, a)));
  renderParams();
}

function renderParams() {
  const tool = TOOLS.find((t) => t.name === $("#run-tool").value);
  const action = $("#run-action").value;
  const schema = tool?.params_schemas?.[action] ?? { properties: {} };
  const required = new Set(schema.required ?? []);
  const box = $("#run-params");
  box.replaceChildren(el("legend", {}, "Params"));
  for (const [name, prop] of Object.entries(schema.properties ?? {})) {
    const type = prop.type ?? (prop.anyOf ?? []).map((x) => x.type).filter((x) => x && x !== "null")[0] ?? "any";
    let input;
    if (type === "boolean") input = el("input", { type: "checkbox", name, "data-type": type });
    else if (type === "object" || type === "array") input = el("textarea", { name, rows: 2, "data-type": type, placeholder: "JSON" });
    else input = el("input", { name, "data-type": type, type: type === "number" || type === "integer" ? "number" : "text", step: "any" });
    if (prop.default !== undefined && prop.default !== null && type !== "boolean") input.placeholder = JSON.stringify(prop.default);
    if (type === "boolean" && prop.default) input.checked = true;
    box.append(el("label", {}, `${name}${required.has(name) ? " *" : ""} `, el("small", {}, `${type}${prop.description ? " — " + prop.description : ""}`), input));
  }
}

function collectParams() {
  const params = {};
  for (const input of $("#run-params").querySelectorAll("[name]")) {
    const type = input.dataset.type;
    if (type === "boolean") { if (input.checked) params[input.name] = true; continue; }
    if (input.value === "") continue;
    if (type === "number" || type === "integer") params[input.name] = Number(input.value);
    else if (type === "object" || type === "array") params[input.name] = JSON.parse(input.value);
    else if (type === "any") {
      try { params[input.name] = JSON.parse(input.value); } catch { params[input.name] = input.value; }
    } else params[input.name] = input.value;
  }
  return params;
}

function renderRecord(box, r) {
  box.hidden = false;
  const parts = [
    el("p", {}, el("strong", {}, `${r.tool_name}.${r.action}`), " ",
      el("span", { class: `status status-${r.status}` }, r.status),
      r.duration_ms != null ? ` in ${r.duration_ms.toFixed(1)} ms` : "", r.worker ? ` on ${r.worker}` : "",
      ` · attempts ${r.attempts} · id `, el("code", {}, r.id)),
  ];
  if (r.error) parts.push(el("p", { class: "status-failed" }, `${r.error.type}: ${r.error.message}`),
    el("pre", {}, r.error.traceback || ""));
  if (r.output !== null && r.output !== undefined) parts.push(el("h4", {}, "output"), el("pre", { class: "output" }, JSON.stringify(r.output, null, 2)));
  if (r.log) parts.push(el("h4", {}, "log"), el("pre", {}, r.log));
  parts.push(el("details", {}, el("summary", {}, "full record"), el("pre", {}, JSON.stringify(r, null, 2))));
  box.replaceChildren(...parts);
  if (r.status === "succeeded" || r.status === "failed") {
    api(`/api/executions/${r.id}/artifacts`).then(async ({ artifacts }) => {
      for (const a of artifacts) {
        // fetched with the key, then shown from a blob URL
        const key = localStorage.getItem("toolfleet-key");
        const blob = await (await fetch(a.url, { headers: key ? { authorization: `Bearer ${key}` } : {} })).blob();
        const url = URL.createObjectURL(blob);
        box.append(el("h4", {}, a.name), a.content_type.startsWith("image/") ? el("img", { src: url, alt: a.name }) : el("a", { href: url, download: a.name }, a.name));
      }
    }).catch(() => {});
  }
}

async function follow(id, box) {
  for (;;) {
    const r = await api(`/api/executions/${id}`);
    renderRecord(box, r);
    if (!["queued", "running"].includes(r.status)) { loadExecutions(); return r; }
    await new Promise((ok) => setTimeout(ok, 300));
  }
}

async function runTool(event) {
  event.preventDefault();
  const box = $("#run-result");
  box.hidden = false;
  try {
    const body = { action: $("#run-action").value, params: collectParams() };
    if ($("#run-target").value) body.target = $("#run-target").value;
    const answer = await api(`/api/form/tools/${$("#run-tool").value}/execute`, { method: "POST", body: JSON.stringify(body) });
    await follow(answer.execution_id, box);
  } catch (err) {
    box.replaceChildren(el("p", { class: "status-failed error" }, String(err.message || err)));
  }
}

async function loadExecutions() {
  const q = new URLSearchParams({ limit: 25 });
  if ($("#filter-tool").value) q.set("tool", $("#filter-tool").value);
  if ($("#filter-status").value) q.set("status", $("#filter-status").value);
  const { executions } = await api(`/api/executions?${q}`);
  $("#exec-table tbody").replaceChildren(...executions.map((r) => el("tr", { "data-id": r.id, onclick: () => follow(r.id, $("#exec-detail")) },
    el("td", {}, new Date(r.submitted_at).toLocaleTimeString()), el("td", {}, `${r.tool_name}.${r.action}`),
    el("td", { class: `status-${r.status}` }, r.status), el("td", {}, r.duration_ms != null ? `${r.duration_ms.toFixed(0)} ms` : ""),
    el("td", {}, r.worker || ""))));
}

let OPEN_PLAN = null;

async function loadPlans() {
  const { plans } = await api("/api/plans?limit=15");
  $("#plan-table tbody").replaceChildren(...plans.map((p) => el("tr", { "data-id": p.plan_id, onclick: () => showPlan(p.plan_id) },
    el("td", {}, new Date(p.created_at).toLocaleTimeString()), el("td", {}, p.goal || p.plan_id.slice(0, 8)),
    el("td", { class: "plan-status" }, p.status), el("td", {}, `${p.current_block + 1}/${p.blocks}`))));
  if (OPEN_PLAN) showPlan(OPEN_PLAN);
}

async function planAction(id, action, body) {
  try { await api(`/api/plans/${id}/${action}`, { method: "POST", body: body ? JSON.stringify(body) : undefined }); }
  catch (err) { alert(err.message); }
  loadPlans();
}

async function showPlan(id) {
  OPEN_PLAN = id;
  const p = await api(`/api/plans/${id}`);
  const box = $("#plan-detail");
  box.hidden = false;
  const buttons = [];
  if (["REVIEW", "VERIFYING"].includes(p.status)) {
    buttons.push(el("button", { type: "button", class: "approve", onclick: () => planAction(id, "approve") }, "Approve"), " ",
      el("button", { type: "button", onclick: () => planAction(id, "reject", { feedback: prompt("What is wrong?") || "" }) }, "Reject"), " ");
  }
  if (!["DONE", "FAILED", "CANCELLED"].includes(p.status)) {
    buttons.push(el("button", { type: "button", onclick: () => planAction(id, "cancel") }, "Cancel"));
  }
  box.replaceChildren(
    el("p", {}, el("strong", {}, p.goal || "plan"), " ", el("span", { class: "plan-state" }, p.status), ` · review ${p.review} · id `, el("code", {}, id)),
    ...(p.error ? [el("p", { class: "status-failed" }, `block ${p.error.block} step ${p.error.step}: ${p.error.error?.message ?? ""}`)] : []),
    ...p.blocks.map((b) => el("div", { class: `plan-block${b.index === p.current_block ? " current" : ""}` },
      el("strong", {}, `block ${b.index} (${b.kind})`),
      el("ol", { start: 0 }, ...b.steps.map((s) => el("li", {}, `${s.tool}.${s.action} `,
        el("span", { class: `status-${s.status}` }, s.status), s.output ? ` → ${JSON.stringify(s.output).slice(0, 120)}` : ""))))),
    el("p", {}, ...buttons));
}

async function loadWorkers() {
  const { categories } = await api("/api/form/categories");
  $("#worker-table tbody").replaceChildren(...categories.map((c) => el("tr", {},
    el("td", {}, c.category), el("td", {}, c.tools), el("td", {}, c.workers), el("td", {}, c.hosts.join(", ")))));
}

async function discover(event) {
  event.preventDefault();
  const q = $("#discover-q").value.trim();
  const box = $("#discover-results");
  if (!q) { box.hidden = true; return; }
  box.hidden = false;
  try {
    const body = await api(`/api/form/discover?${new URLSearchParams({ q, k: 5 })}`);
    box.replaceChildren(el("h2", {}, `Tools for “${q}” (${body.mode})`),
      ...(body.warning ? [el("p", {}, body.warning)] : []),
      el("ol", {}, ...body.results.map((r) => el("li", {}, el("a", { href: "#run", onclick: () => pickTool(r.name) }, r.name),
        ` — ${r.description} `, el("small", {}, `score ${r.score.toFixed(4)}`)))));
  } catch (err) { box.replaceChildren(el("p", { class: "status-failed" }, err.message)); }
}

async function main() {
  $("#run-tool").addEventListener("change", renderActions);
  $("#run-action").addEventListener("change", renderParams);
  $("#run-form").addEventListener("submit", runTool);
  $("#exec-filter").addEventListener("submit", (e) => { e.preventDefault(); loadExecutions(); });
  $("#discover-form").addEventListener("submit", discover);
  const info = await api("/api/info");
  $("#flower-link").href = info.flower_url;
  await Promise.all([loadTools(), loadExecutions(), loadWorkers(), loadPlans()]);
  setInterval(() => { loadWorkers(); loadPlans(); }, 3000);
  document.body.dataset.ready = "1";
}
main();
