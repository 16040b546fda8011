#!/usr/bin/env bash
# Screenshots for docs/screenshots/: a small Brazilian-style import (Windows-1252, `;`, dd/mm/yyyy, decimal commas,
# a few invalid rows) into the embedded sandbox, once with --lang en and once with --lang pt-BR; then
#   report.html                      -> PNG (Chromium headless, 1280x1600)
#   report.xlsx, template customers  -> PDF (LibreOffice headless) -> PNG of page 1 (poppler's pdftoppm, 60 dpi)
# Needs: a build (npm run build), chromium, soffice (LibreOffice Calc), pdftoppm (poppler-utils), iconv.
# On Debian/Ubuntu: apt-get install -y --no-install-recommends chromium libreoffice-calc poppler-utils
# Not part of `npm test` and never run in CI: it is how the pictures in the docs are made.
# Usage: bash scripts/screenshots.sh [OUT_DIR]   (default docs/screenshots)
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$PWD/dist/bin.js"
out="$(realpath -m "${1:-docs/screenshots}")"

missing=()
for tool in soffice pdftoppm iconv; do command -v "$tool" >/dev/null 2>&1 || missing+=("$tool"); done
browser=""
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" >/dev/null 2>&1; then browser="$b"; break; fi
done
[ -n "$browser" ] || missing+=(chromium)
[ -f dist/bin.js ] || missing+=("dist/bin.js (run: npm run build)")
if [ ${#missing[@]} -gt 0 ]; then
  echo "screenshots: missing: ${missing[*]}" >&2
  echo "screenshots: on Debian/Ubuntu: apt-get install -y --no-install-recommends chromium libreoffice-calc poppler-utils" >&2
  exit 2
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/fsm-screenshots.XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"

# The file as a Brazilian implementer's spreadsheet saves it: Portuguese headers, `;`, Windows-1252, decimal commas.
# Rows 4, 6 and 8 are invalid (name missing, a latitude that is not a number, a bad e-mail).
cat > "$work/clientes.utf8.csv" <<'EOF'
Código;Nome;Razão social;CPF/CNPJ;Telefone;E-mail;Endereço;Latitude;Longitude
CLI-0001;Padaria Pão Quente;Pão Quente Panificadora Ltda;11.222.333/0001-81;+55 11 3333-4444;contato@paoquente.com.br;Av. Paulista, 1000, São Paulo - SP;-23,5614;-46,6559
CLI-0002;Açougue São João;São João Carnes Ltda;;+55 11 3222-1111;sjoao@exemplo.com.br;Rua Augusta, 500, São Paulo - SP;-23,5530;-46,6520
CLI-0003;;Sem Nome Comércio Ltda;;+55 21 2222-3333;semnome@exemplo.com.br;Rua do Ouvidor, 10, Rio de Janeiro - RJ;-22,9035;-43,1780
CLI-0004;Farmácia Boa Saúde;Boa Saúde Drogaria ME;;+55 31 3555-6666;boasaude@exemplo.com.br;Av. Afonso Pena, 1500, Belo Horizonte - MG;-19,9245;-43,9352
CLI-0005;Mercearia Três Irmãos;Três Irmãos Ltda;;+55 41 3333-7777;tres@exemplo.com.br;Rua XV de Novembro, 200, Curitiba - PR;norte;-49,2713
CLI-0006;Oficina do Zé;José Pereira Mecânica;;+55 51 3222-8888;ze@exemplo.com.br;Av. Ipiranga, 300, Porto Alegre - RS;-30,0346;-51,2177
CLI-0007;Lavanderia Água Limpa;Água Limpa Serviços Ltda;;+55 71 3333-9999;agua-limpa@;Av. Sete de Setembro, 40, Salvador - BA;-12,9777;-38,5016
EOF
iconv -f UTF-8 -t WINDOWS-1252 "$work/clientes.utf8.csv" > "$work/clientes.csv"

shoot_html() { # HTML PNG
  # --virtual-time-budget lets the page's charts finish drawing before the picture is taken
  "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --virtual-time-budget=3000 \
    --screenshot="$2" --window-size=1280,1600 "file://$(realpath "$1")" >/dev/null 2>&1
}
shoot_sheet() { # XLSX PNG [PNG_OF_README_SHEET]: page 1 of what LibreOffice prints (and the README sheet's first page)
  local base pdf pages p
  base="$(basename "$1" .xlsx)"
  mkdir -p "$work/pdf"
  # A profile of its own, so a LibreOffice the user has open does not take the job over.
  soffice -env:UserInstallation="file://$work/lo-profile" --headless --convert-to pdf --outdir "$work/pdf" "$1" >/dev/null 2>&1
  pdf="$work/pdf/$base.pdf"
  echo "screenshots: $(basename "$2"): $1 prints on $(pdfinfo "$pdf" 2>/dev/null | awk '/^Pages:/ {print $2}') page(s)" >&2
  pdftoppm -png -r 60 -f 1 -l 1 -singlefile "$pdf" "${2%.png}"
  [ -n "${3:-}" ] || return 0
  pages="$(pdfinfo "$pdf" | awk '/^Pages:/ {print $2}')"
  for ((p = 1; p <= pages; p++)); do # the README sheet's first page is the one naming the validate command
    if pdftotext -f "$p" -l "$p" "$pdf" - | grep -q "fsm-bulk validate customers"; then
      pdftoppm -png -r 60 -f "$p" -l "$p" -singlefile "$pdf" "${3%.png}"
      return 0
    fi
  done
  echo "screenshots: no README page found in $pdf" >&2
}

for lang in en pt-BR; do
  run="$work/run-$lang"
  echo "screenshots: import customers (--lang $lang) into the embedded sandbox" >&2
  # Run from the work folder so the pictures show `clientes.csv`, not a temporary path. Exit 1 is expected: three
  # rows are invalid; the closing lines go to a log, shown when the import wrote no report.
  (cd "$work" && node "$bin" import clientes clientes.csv --date-format dd/mm/yyyy --out "run-$lang" --lang "$lang") \
    >"$work/import-$lang.log" 2>&1 || true
  [ -f "$run/report.html" ] || { cat "$work/import-$lang.log" >&2; echo "screenshots: the import wrote no report.html in $run" >&2; exit 1; }
  shoot_html "$run/report.html" "$out/report-html-$lang.png"
  cp "$run/report.xlsx" "$work/report-$lang.xlsx"
  shoot_sheet "$work/report-$lang.xlsx" "$out/report-xlsx-$lang.png"
  node "$bin" template customers --format xlsx --out "$work/template-$lang" --lang "$lang" >/dev/null 2>&1
  cp "$work/template-$lang/customers.xlsx" "$work/template-customers-$lang.xlsx"
  shoot_sheet "$work/template-customers-$lang.xlsx" "$out/template-customers-xlsx-$lang.png" \
    "$out/template-customers-readme-$lang.png"
done
ls -l "$out"/*.png >&2
