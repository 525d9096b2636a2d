// The invite's token arrives after `#`, which browsers never send to a server: it is read here,
// removed from the address bar and history, and sent only in the body of POST /api/signup.
const TOKEN = /^phi_[0-9A-Za-z]{44}$/;
const fragment = location.hash.slice(1);
history.replaceState(null, "", location.pathname);
// A fragment no token could be (a broken %-escape) is no token: the page says so below.
const token = (() => {
  try {
    return decodeURIComponent(fragment);
  } catch {
    return "";
  }
})();

const status = document.getElementById("status");
const form = document.getElementById("join");

function show(message) {
  status.textContent = message;
}

async function join(event) {
  event.preventDefault();
  const fields = new FormData(form);
  const headers = { "Content-Type": "application/json" };
  const apiKey = String(fields.get("api_key") ?? "").trim();
  if (apiKey) headers.Authorization = `Bearer ${apiKey}`;
  const body = { token };
  for (const name of ["first_name", "last_name"]) {
    const value = String(fields.get(name) ?? "").trim();
    if (value && !apiKey) body[name] = value;
  }
  if (fields.get("claim_account") && !apiKey) body.claim_account = true;
  form.querySelector("button").disabled = true;
  const response = await fetch("/api/signup", { method: "POST", headers, body: JSON.stringify(body) });
  const answer = await response.json().catch(() => ({}));
  form.querySelector("button").disabled = false;
  if (response.status !== 201) {
    show(answer.detail ?? `The invite could not be accepted (HTTP ${response.status}).`);
    // An account exists for the address, its address not proven: its owner may take it over.
    if (answer.attr === "claim_account") document.getElementById("claim").hidden = false;
    return;
  }
  form.hidden = true;
  show("");
  document.getElementById("joined").hidden = false;
  if (answer.personal_api_key) {
    document.getElementById("key-value").textContent = answer.personal_api_key.value;
    document.getElementById("new-key").hidden = false;
  }
}

if (TOKEN.test(token)) {
  form.hidden = false;
  form.addEventListener("submit", join);
} else {
  show("This link holds no invite. Open the link from your invite e-mail as it is.");
}
