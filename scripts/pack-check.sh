#!/usr/bin/env bash
# What a host does with laari's packages, outside this workspace: pack @laari/core, @laari/testkit and
# @laari/server with `pnpm pack`, install the tarballs with plain npm in an empty folder, then
#  - compile the embedding snippet (the first `ts` block of docs/embedding.md) and a TypeScript host against
#    the packages' declarations with tsc (module NodeNext, strict), and run both under plain node (the
#    snippet must print a charge);
#  - run the `laari` bin of @laari/server: its help, and `laari serve` answering /health on PGlite.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
WORK="$(mktemp -d)"
trap 'kill "${SERVER_PID:-}" 2>/dev/null || true; rm -rf "$WORK"' EXIT

pnpm --silent build
mkdir -p "$WORK/tarballs" "$WORK/app"
pnpm --filter @laari/core --filter @laari/testkit --filter @laari/server pack --pack-destination "$WORK/tarballs" >/dev/null
ls "$WORK/tarballs"

cd "$WORK/app"
npm init -y >/dev/null
npm pkg set type=module
npm install --no-audit --no-fund --loglevel=error "$WORK"/tarballs/*.tgz effect typescript@~5.9.3 @types/node@^20.19.0 >/dev/null

# The embedding snippet, as a newcomer would copy it, and a typed host: the declarations resolve through
# `exports` and both type-check in strict mode.
awk '/^```ts$/{block=1; next} block && /^```$/{exit} block{print}' "$ROOT/docs/embedding.md" > main.ts
test -s main.ts || { echo "pack-check: no ts snippet in docs/embedding.md"; exit 1; }
cp "$ROOT/scripts/pack-check/host.ts" host.ts
cat > tsconfig.json <<'JSON'
{ "compilerOptions": { "module": "NodeNext", "moduleResolution": "NodeNext", "target": "ES2022", "strict": true,
  "outDir": "out", "types": ["node"], "skipLibCheck": false }, "files": ["host.ts", "main.ts"] }
JSON
npx tsc -p tsconfig.json
node out/main.js | tee snippet.out
grep -q "netAmount" snippet.out || { echo "pack-check: the embedding snippet did not print a charge"; exit 1; }

node out/host.js | tee host.out
grep -q "merchant created with 1 outlet, 1 in all" host.out || { echo "pack-check: the typed host did not create its merchant"; exit 1; }
grep -q "charged 12550" host.out || { echo "pack-check: the typed host did not charge"; exit 1; }
grep -q "key resolves to its merchant" host.out || { echo "pack-check: the typed host's key did not resolve"; exit 1; }

# The service and its CLI from the installed package: help, then `laari serve` on PGlite, answering
# /healthz, and the CLI operating it with the token it generated.
# The installed bin itself, not through npx (which can fail on its own, e.g. reaching the registry):
# seen once in CI as a bare exit 1 with nothing printed, so a failure now shows what the CLI wrote.
LAARI="$WORK/app/node_modules/.bin/laari"
"$LAARI" --help > help.out 2>&1 || { cat help.out; echo "pack-check: laari --help failed"; exit 1; }
for command in serve migrate "merchants create" "keys create" "customers create" "clock advance" listen trigger; do
  grep -qE "^  $command( |\$)" help.out || { echo "pack-check: laari --help does not list '$command'"; exit 1; }
done
PORT="$(node -e 'const s=require("net").createServer().listen(0,()=>{console.log(s.address().port);s.close()})')"
export PORT LAARI_DATA_DIR="$WORK/data"
"$LAARI" serve > serve.out 2>&1 &
SERVER_PID=$!
# Ready means /healthz answers and the start-up lines (with the demo key) are written: /healthz can
# answer before the first start has seeded the demo merchant and printed its key (a CI run once read
# serve.out in between, found no key, and `set -e` ended the script without a word).
for _ in $(seq 1 120); do
  curl -fsS "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && grep -q 'sk_test_' serve.out && break
  kill -0 "$SERVER_PID" 2>/dev/null || { cat serve.out; echo "pack-check: laari serve exited"; exit 1; }
  sleep 0.5
done
curl -fsS "http://127.0.0.1:$PORT/healthz" >/dev/null || { cat serve.out; echo "pack-check: laari serve never answered"; exit 1; }
# Every page a customer or a merchant opens answers 200 HTML from the packaged service (the JSX of the
# compiled pages included): the home page, the dashboard, the wallet, the API reference, a checkout page.
KEY="$(grep -o -m 1 'sk_test_[0-9a-f]*' serve.out || true)"
test -n "$KEY" || { cat serve.out; echo "pack-check: laari serve printed no demo secret key"; exit 1; }
CHECKOUT="$(curl -fsS "http://127.0.0.1:$PORT/checkout/sessions" -H "Authorization: Bearer $KEY" \
  -H "Content-Type: application/json" -d '{"reference":"pack-check","title":"Pack check","amount":1500}' \
  | node -e 'let s="";process.stdin.on("data",(d)=>s+=d).on("end",()=>console.log(JSON.parse(s).url))')"
for page in "http://127.0.0.1:$PORT/" "http://127.0.0.1:$PORT/dashboard" "http://127.0.0.1:$PORT/wallet" \
  "http://127.0.0.1:$PORT/docs" "$CHECKOUT"; do
  answer="$(curl -sS -o /dev/null -w '%{http_code} %{content_type}' "$page")"
  case "$answer" in
    "200 text/html"*) ;;
    *) cat serve.out; echo "pack-check: $page answered '$answer', not 200 HTML"; exit 1 ;;
  esac
done
"$LAARI" merchants list | tee merchants.out
grep -q "Demo Cafe" merchants.out || { echo "pack-check: laari merchants list did not list the demo merchant"; exit 1; }
kill "$SERVER_PID"
wait "$SERVER_PID" || true

echo "pack-check: ok (the embedding snippet and a typed host under tsc and node, laari serve, its pages and CLI from the tarball)"
