#!/usr/bin/env bash
# Runs Specter as a CI gate: `specter test` on scenario files and `specter verify` on goldens, artifact
# bundles into one directory, a Markdown summary, and a non-zero exit on any failure or drift.
# The GitHub Action (action.yml) and the GitLab template (ci/gitlab/specter.gitlab-ci.yml) both run this
# script; it also runs locally with none of their variables set. Guide: docs/ci.md.
#
# Inputs (environment variables; each is data, never evaluated by a shell):
#   SPECTER_SCENARIOS      globs of scenario files, separated by whitespace or newlines
#   SPECTER_VERIFY         one `GOLDEN [FLAGS] -- CMD ARGS…` per line for `specter verify`, split into words
#                          like xargs does ('…' and "…" group words, \ escapes the next character)
#   SPECTER_ARGS           extra flags for every `specter test`, split the same way
#   SPECTER_ARTIFACTS_DIR  where everything goes (default specter-artifacts):
#                            test/NN-NAME/   the bundle of the NNth scenario; test/NN-NAME.log its output
#                            verify/NN-NAME.log  the output of the NNth verify line (the diff on drift)
#                            summary.md      the Markdown summary
#   SPECTER_DENO_VERSION   the Deno to run Specter with (default: the version scripts/dev pins)
#   SPECTER_TOOLS_DIR      where that Deno is installed from npm when `deno` on PATH is another version
#                          (default: $RUNNER_TOOL_CACHE/specter, else ${XDG_CACHE_HOME:-~/.cache}/specter)
#   SPECTER_INSTALL_PACKAGES  auto (default): apt-get install bubblewrap when bwrap is missing; false: never
#   GITHUB_STEP_SUMMARY    when set, the summary is appended to it as well
# Exit status: 0 when every scenario passed and every golden matched; otherwise the highest status of a
# specter run (1 a failed scenario or a drifted golden, 2 bad usage or a bad file, 125 Specter could not
# run); 2 for bad inputs found before anything ran; 125 when Deno could not be installed.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

say() { printf 'specter-ci: %s\n' "$*" >&2; }
usage_error() {
  say "error: $*"
  exit 2
}
setup_error() {
  say "error: $*"
  exit 125
}

# --- Inputs ----------------------------------------------------------------------------------------

scenarios_input=${SPECTER_SCENARIOS:-}
verify_input=${SPECTER_VERIFY:-}
args_input=${SPECTER_ARGS:-}
artifacts=${SPECTER_ARTIFACTS_DIR:-specter-artifacts}
install_packages=${SPECTER_INSTALL_PACKAGES:-auto}
deno_version=${SPECTER_DENO_VERSION:-}
if [ -z "$deno_version" ]; then
  deno_version=$(sed -n 's/^DENO_VERSION=//p' "$root/scripts/dev" | head -n1)
fi
[[ $deno_version =~ ^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$ ]] ||
  usage_error "SPECTER_DENO_VERSION must be a version such as 2.9.6, not '$deno_version'"
# A directory name starting with '-' would read as a flag.
if [[ $artifacts == -* ]]; then artifacts="./$artifacts"; fi

# Splits $1 into words like xargs (quotes and backslashes, nothing else) into the array named $2.
# shellcheck disable=SC2034 # split_out is a nameref: it fills the caller's array
split_words() {
  local text=$1
  local -n split_out=$2
  local tmp status=0
  split_out=()
  tmp=$(mktemp)
  printf '%s\n' "$text" | xargs -r printf '%s\0' >"$tmp" 2>/dev/null || status=$?
  if [ "$status" -eq 0 ]; then mapfile -d '' -t split_out <"$tmp"; fi
  rm -f "$tmp"
  return "$status"
}

# A name for files derived from a path: its base name without extension, only [A-Za-z0-9._-].
slug() {
  local name=${1##*/}
  name=${name%.*}
  name=${name//[^A-Za-z0-9._-]/_}
  printf '%s' "${name:-unnamed}"
}

test_args=()
split_words "$args_input" test_args || usage_error "SPECTER_ARGS has an unmatched quote"

# Expands one glob into the matching paths, NUL-terminated. IFS is empty inside, so the unquoted
# expansion does pathname expansion only: no word splitting, and nothing is evaluated.
expand_glob() {
  local IFS=
  local -a found
  # shellcheck disable=SC2206 # pathname expansion of the pattern is the point
  found=($1)
  if [ ${#found[@]} -eq 1 ] && [ ! -e "${found[0]}" ]; then return 0; fi # a plain name that is missing
  if [ ${#found[@]} -gt 0 ]; then printf '%s\0' "${found[@]}"; fi
}

# Scenario globs: split on whitespace (a space inside a name can be matched with ?), then expanded.
scenario_files=()
patterns=()
read -r -d '' -a patterns <<<"$scenarios_input" || true
shopt -s nullglob globstar
for pattern in "${patterns[@]}"; do
  matches=()
  mapfile -d '' -t matches < <(expand_glob "$pattern")
  [ ${#matches[@]} -gt 0 ] || usage_error "no scenario file matches '$pattern'"
  scenario_files+=("${matches[@]}")
done
shopt -u nullglob globstar

verify_lines=()
while IFS= read -r line || [ -n "$line" ]; do
  line=${line%$'\r'}
  [[ $line =~ ^[[:space:]]*(#|$) ]] && continue # blank lines and comments
  verify_lines+=("$line")
done <<<"$verify_input"

[ ${#scenario_files[@]} -gt 0 ] || [ ${#verify_lines[@]} -gt 0 ] ||
  usage_error "nothing to run: set SPECTER_SCENARIOS (scenario globs) and/or SPECTER_VERIFY (golden lines)"

# Each verify line is checked now, so a typo fails before anything runs.
for line in "${verify_lines[@]}"; do
  words=()
  split_words "$line" words || usage_error "verify line has an unmatched quote: $line"
  [ ${#words[@]} -ge 3 ] || usage_error "verify line is not 'GOLDEN [FLAGS] -- CMD ARGS…': $line"
  has_separator=false
  for word in "${words[@]:1}"; do [ "$word" = "--" ] && has_separator=true && break; done
  $has_separator || usage_error "verify line has no '--' before the command: $line"
done

# --- Deno ------------------------------------------------------------------------------------------

deno_version_of() { "$1" --version 2>/dev/null | head -n1 | cut -d' ' -f2; }

find_deno() {
  local candidate
  candidate=$(command -v deno 2>/dev/null || true)
  if [ -n "$candidate" ] && [ "$(deno_version_of "$candidate")" = "$deno_version" ]; then
    printf '%s' "$candidate"
    return
  fi
  local tools=${SPECTER_TOOLS_DIR:-${RUNNER_TOOL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}}/specter}
  local prefix="$tools/deno-$deno_version"
  candidate="$prefix/node_modules/deno/deno"
  if [ ! -x "$candidate" ] || [ "$(deno_version_of "$candidate")" != "$deno_version" ]; then
    command -v npm >/dev/null 2>&1 || setup_error "npm is needed to install deno@$deno_version (install Node.js)"
    say "installing deno@$deno_version from npm into $prefix"
    mkdir -p "$prefix"
    npm install --silent --no-audit --no-fund --no-save --prefix "$prefix" "deno@$deno_version" >&2 ||
      setup_error "npm install deno@$deno_version failed"
    if [ ! -x "$candidate" ]; then
      # The npm package links its platform binary in a postinstall step; else take the platform package's.
      local alt
      for alt in "$prefix"/node_modules/@deno/*/deno; do [ -x "$alt" ] && candidate=$alt && break; done
    fi
  fi
  [ "$(deno_version_of "$candidate")" = "$deno_version" ] ||
    setup_error "no working deno $deno_version after npm install (looked at $candidate)"
  printf '%s' "$candidate"
}

deno=$(find_deno)
say "deno $deno_version: $deno"

# --- The sandbox backend ---------------------------------------------------------------------------

as_root() {
  if [ "$(id -u)" = 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo -n "$@"
  else
    return 1
  fi
}

if ! command -v bwrap >/dev/null 2>&1; then
  if [ "$install_packages" != false ] && command -v apt-get >/dev/null 2>&1; then
    say "installing bubblewrap (the sandbox backend) with apt-get"
    apt_install=(env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap)
    as_root "${apt_install[@]}" >&2 ||
      { as_root apt-get update -qq >&2 && as_root "${apt_install[@]}" >&2; } ||
      say "warning: could not install bubblewrap; runs will fail with E_SANDBOX_UNAVAILABLE"
  else
    say "warning: bwrap is not installed; runs will fail with E_SANDBOX_UNAVAILABLE (apt-get install bubblewrap)"
  fi
fi
# Ubuntu 23.10+ (GitHub's ubuntu-24.04 runners) forbid unprivileged user namespaces through AppArmor, which
# bwrap needs. A GitHub-hosted runner is a throwaway VM: lift the restriction there; elsewhere only say so.
userns_knob=/proc/sys/kernel/apparmor_restrict_unprivileged_userns
if [ -r "$userns_knob" ] && [ "$(cat "$userns_knob")" = 1 ] && [ "$(id -u)" != 0 ]; then
  if [ "${RUNNER_ENVIRONMENT:-}" = github-hosted ] && [ "$install_packages" != false ]; then
    say "allowing unprivileged user namespaces for bwrap (sysctl kernel.apparmor_restrict_unprivileged_userns=0)"
    as_root sysctl -q -w kernel.apparmor_restrict_unprivileged_userns=0 >&2 ||
      say "warning: could not change kernel.apparmor_restrict_unprivileged_userns"
  else
    say "warning: kernel.apparmor_restrict_unprivileged_userns=1 may stop bwrap (see docs/ci.md)"
  fi
fi

specter=("$deno" run --quiet -A --config "$root/deno.json" "$root/main.ts")
# Fetch Specter's npm packages up front (also the lazily imported ones): a network failure here is a
# setup failure, not a failed scenario (deno would exit 1 for it).
"$deno" cache --quiet --config "$root/deno.json" "$root/main.ts" "$root/src/mod.ts" >&2 ||
  setup_error "deno could not fetch Specter's dependencies"

# --- Runs ------------------------------------------------------------------------------------------

# On GitHub, output of the programs under test must not issue workflow commands (::add-mask:: …).
gh_token=""
commands_off() {
  [ "${GITHUB_ACTIONS:-}" = true ] || return 0
  gh_token=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
  printf '::stop-commands::%s\n' "$gh_token"
}
commands_on() {
  [ -n "$gh_token" ] || return 0
  printf '::%s::\n' "$gh_token"
  gh_token=""
}

# Runs specter with "$@", its output to the terminal and to the log file $1; sets $run_status.
run_specter() {
  local log=$1
  shift
  commands_off
  set +e
  "${specter[@]}" "$@" </dev/null 2>&1 | tee "$log"
  run_status=${PIPESTATUS[0]}
  set -e
  commands_on
}

mkdir -p "$artifacts"
overall=0
sep=$'\x1f'  # separates the fields of a row (a tab would merge empty fields)
rows_test=()   # status, exit, scenario, bundle, log
rows_verify=() # status, exit, golden, log
run_status=0

if [ ${#scenario_files[@]} -gt 0 ]; then mkdir -p "$artifacts/test"; fi
i=0
for file in "${scenario_files[@]}"; do
  i=$((i + 1))
  name=$(printf '%02d-%s' "$i" "$(slug "$file")")
  bundle="$artifacts/test/$name"
  log="$artifacts/test/$name.log"
  say "specter test $file"
  run_specter "$log" test "${test_args[@]}" --artifacts "$bundle" -- "$file"
  case $run_status in
    0) status=PASSED ;;
    1) status=FAILED ;;
    *) status=ERROR ;;
  esac
  [ -d "$bundle" ] || bundle=""
  rows_test+=("$status$sep$run_status$sep$file$sep$bundle$sep$log")
  if [ "$run_status" -gt "$overall" ]; then overall=$run_status; fi
done

if [ ${#verify_lines[@]} -gt 0 ]; then mkdir -p "$artifacts/verify"; fi
i=0
for line in "${verify_lines[@]}"; do
  i=$((i + 1))
  words=()
  split_words "$line" words
  golden=${words[0]}
  # A golden named like a flag is passed as ./NAME (specter reads it as a path either way).
  if [[ $golden == -* ]]; then words[0]="./$golden"; fi
  log="$artifacts/verify/$(printf '%02d-%s' "$i" "$(slug "$golden")").log"
  say "specter verify $line"
  run_specter "$log" verify "${words[@]}"
  case $run_status in
    0) status=OK ;;
    1) status=DRIFT ;;
    *) status=ERROR ;;
  esac
  rows_verify+=("$status$sep$run_status$sep$golden$sep$log")
  if [ "$run_status" -gt "$overall" ]; then overall=$run_status; fi
done

# --- Summary ---------------------------------------------------------------------------------------

# Text for a Markdown table cell in a code span: no backticks, pipes escaped, one line.
cell() {
  local text=${1//\`/\'}
  text=${text//|/\\|}
  text=${text//$'\n'/ }
  printf '%s%s%s' '`' "$text" '`'
}

count() { # count STATUS ROWS… → how many rows start with STATUS
  local want=$1 n=0 row
  shift
  for row in "$@"; do [ "${row%%"$sep"*}" = "$want" ] && n=$((n + 1)); done
  printf '%d' "$n"
}

passed=$(count PASSED "${rows_test[@]}")
matched=$(count OK "${rows_verify[@]}")
line_text="${#rows_test[@]} scenario(s): $passed passed; ${#rows_verify[@]} golden(s): $matched matched"
if [ "$overall" -eq 0 ]; then verdict=PASSED; else verdict="FAILED (exit $overall)"; fi

summary="$artifacts/summary.md"
{
  printf '## Specter: %s\n\n%s. Artifacts: %s\n' "$verdict" "$line_text" "$(cell "$artifacts")"
  if [ ${#rows_test[@]} -gt 0 ]; then
    printf '\n| Scenario | Result | Bundle | Output |\n| --- | --- | --- | --- |\n'
    for row in "${rows_test[@]}"; do
      IFS="$sep" read -r status code file bundle log <<<"$row"
      mark="✅"
      [ "$status" = PASSED ] || mark="❌"
      printf '| %s | %s %s (exit %s) | %s | %s |\n' "$(cell "$file")" "$mark" "$status" "$code" \
        "$(if [ -n "$bundle" ]; then cell "$bundle"; else printf 'none'; fi)" "$(cell "$log")"
    done
  fi
  if [ ${#rows_verify[@]} -gt 0 ]; then
    printf '\n| Golden | Result | Output |\n| --- | --- | --- |\n'
    for row in "${rows_verify[@]}"; do
      IFS="$sep" read -r status code golden log <<<"$row"
      mark="✅"
      [ "$status" = OK ] || mark="❌"
      printf '| %s | %s %s (exit %s) | %s |\n' "$(cell "$golden")" "$mark" "$status" "$code" "$(cell "$log")"
    done
  fi
  # The end of each failure's output: the failed step and its screen, or the golden's diff.
  for row in "${rows_test[@]}" "${rows_verify[@]}"; do
    IFS="$sep" read -r status code subject rest <<<"$row"
    case $status in PASSED | OK) continue ;; esac
    log=${rest##*"$sep"}
    lang=text
    if [ "$status" = DRIFT ]; then lang="diff"; fi
    printf '\n<details><summary>%s: %s</summary>\n\n~~~~%s\n' "$status" "$(cell "$subject")" "$lang"
    tail -n 60 "$log" 2>/dev/null | sed 's/^~~~~/ ~~~~/' || true
    printf '~~~~\n\n</details>\n'
  done
} >"$summary"

if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  cat "$summary" >>"$GITHUB_STEP_SUMMARY"
fi
say "$verdict: $line_text; artifacts in $artifacts (summary: $summary)"
exit "$overall"
