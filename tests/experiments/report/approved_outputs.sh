# The report's golden-file tests share this (sourced): their outputs in OUT against the approved ones
# in FIXTURE/approved, byte for byte.
# approve_or_compare FIXTURE OUT MODE: with MODE --approve, FIXTURE/approved becomes a copy of OUT and
# the script exits 0; otherwise every approved file must have been produced with the same bytes, and
# as many files produced as approved. Each difference calls the caller's fail (which records it).
approve_or_compare() {
  local fixture=$1 out=$2 mode=$3 file rel produced approved
  if [[ $mode == --approve ]]; then
    rm -rf "$fixture/approved" && cp -r "$out" "$fixture/approved"
    echo "approved: $(find "$fixture/approved" -type f | wc -l) files"
    exit 0
  fi
  while IFS= read -r -d '' file; do
    rel=${file#"$fixture/approved/"}
    if [[ ! -f "$out/$rel" ]]; then
      fail "$rel is approved but was not produced"
    elif ! diff -u "$file" "$out/$rel"; then
      fail "$rel differs from the approved output (above)"
    fi
  done < <(find "$fixture/approved" -type f -print0)
  produced=$(find "$out" -type f | wc -l) approved=$(find "$fixture/approved" -type f | wc -l)
  [[ $produced -eq $approved ]] || fail "$produced files produced, $approved approved"
}
