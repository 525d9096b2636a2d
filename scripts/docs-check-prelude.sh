# Sourced by scripts/docs-check.mjs before the documentation's blocks: every curl reports its
# status, and one outside 2xx that no `# expect` line announced stops the session.
set -euo pipefail
__docs_expect=""
curl() {
  local response status expected="$__docs_expect" request="${*: -1}"
  response=$(command curl -sS -w '\n%{http_code}' "$@")
  status=${response##*$'\n'}
  printf '%s\n' "${response%$'\n'*}"
  if [[ -n $expected ]]; then
    [[ $status == "$expected" || ( $expected == ?xx && ${status:0:1} == "${expected:0:1}" ) ]] && return 0
    echo "docs:check: expected HTTP $expected, got $status: $request" >&2
    return 1
  fi
  if (( status < 200 || status > 299 )); then
    echo "docs:check: HTTP $status not announced by '# expect': $request" >&2
    return 1
  fi
}
