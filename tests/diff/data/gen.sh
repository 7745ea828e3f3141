#!/usr/bin/env bash
# Regenerate the golden diffs in this directory with real `git diff`.
#
#   tests/diff/data/gen.sh [OUTPUT_DIR]     (default: this directory)
#
# Each scenario builds a fresh repository with a base and a head commit and writes
# `git diff base head` with the options `assay.forge.git.GitRepo.diff` uses. Index lines
# carry blob ids only (no commit ids), so the output is reproducible. The expected
# `<name>.json` beside each diff is reviewed by hand; `python tests/diff/test_diff_golden.py`
# prints a draft for a new scenario.
set -euo pipefail

out_dir=$(cd "${1:-$(dirname "$0")}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Hermetic git: no user or system configuration, fixed identity and dates.
export HOME="$work" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null LC_ALL=C TZ=UTC
export GIT_AUTHOR_NAME=Golden GIT_AUTHOR_EMAIL=golden@example.com
export GIT_COMMITTER_NAME=Golden GIT_COMMITTER_EMAIL=golden@example.com
export GIT_AUTHOR_DATE='2024-01-01T00:00:00Z' GIT_COMMITTER_DATE='2024-01-01T00:00:00Z'

diff_options=(--no-ext-diff --no-color --no-textconv --no-relative --full-index -M
              --src-prefix=a/ --dst-prefix=b/)

# scenario NAME BASE_FUNCTION HEAD_FUNCTION [EXTRA_DIFF_OPTIONS...]
scenario() {
    local name=$1 base=$2 head=$3
    shift 3
    local repo="$work/$name"
    git init -q -b main "$repo"
    (cd "$repo" && "$base" && git add -A && git commit -q --allow-empty -m base)
    (cd "$repo" && "$head" && git add -A && git commit -q --allow-empty -m head)
    git -C "$repo" -c core.quotepath=false diff "${diff_options[@]}" "$@" HEAD~1 HEAD \
        > "$out_dir/$name.diff"
}

nothing() { :; }

modified_base() {
    {
        printf 'import os\n\n\ndef setup():\n'
        for i in $(seq 1 12); do printf '    step_%d()\n' "$i"; done
        printf '\n\ndef run():\n    go()\n    report()\n\n\ndef teardown():\n'
        for i in $(seq 1 12); do printf '    undo_%d()\n' "$i"; done
    } > app.py
}
modified_head() {
    sed -i 's/^import os$/import os\nimport sys/; s/    go()/    go(fast=True)/; s/    undo_11()/    undo_eleven()/' app.py
}

added_head() { printf 'first\nsecond\nthird\n' > new.txt; }

deleted_base() { printf 'alpha\nbeta\n' > gone.txt; }
deleted_head() { rm gone.txt; }

rename_base() { seq 1 20 > old.txt; }
rename_pure_head() { git mv old.txt new.txt; }
rename_edit_head() { git mv old.txt new.txt && sed -i 's/^10$/ten/' new.txt; }

copy_base() { seq 1 20 > source.txt; }
copy_head() { cp source.txt copy.txt && printf '21\n' >> source.txt; }

binary_base() { printf '\x00\x01\x02\x03' > image.bin; }
binary_head() { printf '\x00\x01\x02\x04' > image.bin && printf '\x00\xff' > added.bin; }

mode_base() { printf '#!/bin/sh\necho hi\n' > run.sh; }
mode_head() { chmod +x run.sh; }

no_newline_base() { printf 'a\nb\nc' > tail.txt; }
no_newline_head() { printf 'a\nb\nC' > tail.txt; }

latin1_base() { printf 'caf\xe9\nna\xefve\n' > latin1.txt; }
latin1_head() { printf 'caf\xe9\nna\xefve\n\xa9 2024\n' > latin1.txt; }

names_base() {
    printf 'one\n' > 'with space.txt'
    printf 'un\n' > 'naïve café.txt'
    mkdir -p 'x b'
    printf 'x\n' > 'x b/y.txt'
}
names_head() {
    printf 'one\ntwo\n' > 'with space.txt'
    printf 'un\ndeux\n' > 'naïve café.txt'
    printf 'x\ny\n' > 'x b/y.txt'
    printf 'tab\n' > "$(printf 'tab\there.txt')"
    printf 'quote\n' > 'say "hi".txt'
}

symlink_head() { ln -s target.txt link.txt; }

empty_file_head() { : > empty.txt; }

crlf_base() { printf 'one\r\ntwo\r\n' > windows.txt; }
crlf_head() { printf 'one\r\nTWO\r\n' > windows.txt; }

scenario modified modified_base modified_head
scenario added nothing added_head
scenario deleted deleted_base deleted_head
scenario rename_pure rename_base rename_pure_head
scenario rename_edit rename_base rename_edit_head
scenario copy copy_base copy_head -C
scenario binary binary_base binary_head
scenario mode_only mode_base mode_head
scenario no_newline no_newline_base no_newline_head
scenario latin1 latin1_base latin1_head
scenario names names_base names_head
scenario symlink nothing symlink_head
scenario empty_file nothing empty_file_head
scenario crlf crlf_base crlf_head

# The same change with git's default quoting of non-ASCII bytes (\303\257 …).
git -C "$work/names" -c core.quotepath=true diff "${diff_options[@]}" HEAD~1 HEAD \
    > "$out_dir/names_quotepath.diff"
