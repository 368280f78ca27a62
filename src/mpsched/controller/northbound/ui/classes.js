// mpsched operator dashboard, the classes panel (app.js calls renderClasses every poll): each
// traffic class with its policy, its placement per switch (weights, mode, flowlet gap; mode
// ca: the cost the switch computes) and a form to change its policy (PUT
// /classes/{id}/policy).
"use strict";

function policyText(p) {
  const params = Object.entries(p.params || {}).map(([k, v]) => `${k}=${v}`).join(" ");
  const gap = p.flowlet_gap_us ? `${p.flowlet_gap_us} µs` : "auto";
  return `${p.name}${p.lm3 ? "+lm3" : ""} gap ${gap}` + (params ? ` (${params})` : "");
}

// Mode ca: the cost the switch computes (coefficients, per-path offset µs / capacity Mbit/s).
function caText(ca) {
  const paths = Object.entries(ca.paths || {}).map(([p, v]) =>
    `path ${p} +${fmt(v.offset_us, 0)} µs at ${fmt(v.capacity_mbps, 3)} Mbit/s`);
  return `\n  cost: qdelay×${ca.qdelay_coef} loss ${ca.loss_coef_us} µs/% util `
    + `${ca.util_coef_us} µs eps ${ca.epsilon_us} µs age ${ca.max_age_ms} ms; `
    + paths.join(", ");
}

function placementText(c) {
  return Object.entries(c.placement || {}).map(([sw, pl]) => !pl ? `${sw}: –`
    : `${sw}: ${pl.mode} ` + Object.entries(pl.weights).map(([p, w]) => `${p}:${w}`).join(" ")
      + ` gap ${pl.flowlet_gap_us} µs` + (pl.syn_copy ? " SYN copies" : "")
      + (pl.ca ? caText(pl.ca) : "")).join("\n");
}

function policyForm(id) {
  const name = el("select", { class: "policy-name" },
    ...state.policies.map((n) => el("option", { value: n, text: n })));
  const params = el("input", { class: "params", placeholder: "params {\"beta\": 0.01}",
    title: "the policy's parameters as JSON, e.g. {\"beta\": 0.01}" });
  const lm3 = el("input", { type: "checkbox", class: "lm3" });
  const gap = el("input", { type: "number", class: "gap", min: 0, placeholder: "gap µs" });
  const apply = el("button", { class: "apply", text: "apply", onclick: () => {
    const body = { name: name.value, lm3: lm3.checked };
    if (gap.value !== "") body.flowlet_gap_us = Number(gap.value);
    if (params.value.trim()) {
      try { body.params = JSON.parse(params.value); } catch (e) {
        showMessage(`params: not JSON: ${e.message}`, true);
        return;
      }
    }
    put(`/classes/${id}/policy`, body);
  } });
  const cls = state.classes.find((c) => String(c.id) === id);
  if (cls) { name.value = cls.policy.name; lm3.checked = cls.policy.lm3; }
  return el("td", {}, el("div", { class: "policy-form" }, name,
    el("label", {}, "lm3 ", lm3), gap, params, apply));
}

function renderClasses() {
  const rows = syncRows($("classes").tBodies[0], state.classes.map((c) => String(c.id)), (id) =>
    el("tr", {}, el("td", {}), el("td", {}),
      el("td", { class: "pre" }), policyForm(id)));
  state.classes.forEach((c, i) => setCells(rows[i], [`${c.id} ${c.name}`, policyText(c.policy),
    placementText(c)]));
}
