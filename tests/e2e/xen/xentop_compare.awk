# SPDX-License-Identifier: LGPL-2.1-or-later
# Installed in the e2e dom0 as /xentop_compare.awk (figures.sh):
#   awk -v tol=SECONDS -v pct=POINTS -f xentop_compare.awk XENTOP_OUT OURS_OUT
# Two outputs of `xentop -b` with the same options on the same domains, one
# of Debian's xentop, one of `xenstats xentop`, taken at the same time:
# the same lines (headers, rows, VCPUs/Net/VBD lines, in the same order, so
# the same count per round), every header byte for byte, every field
# ending at the same column, the same names, and each figure within what
# the interval can change: CPU seconds within tol, CPU(%) 0.0 in the first
# round and within pct points after, devices' counts within a little
# traffic, the rest exactly.  Prints each difference; exit status 1 if any.
# POSIX awk only (busybox's runs it).

function kind(l) {
    if (l ~ /^ *NAME +STATE /)
        return "header"
    if (l ~ /^VCPUs\(sec\): /)
        return "vcpus"
    if (l ~ /^         [ 0-9][0-9]: /)
        return "vcpus-more"
    if (l ~ /^Net[0-9]+ RX: /)
        return "net"
    if (l ~ /^VBD /)
        return "vbd"
    if (l ~ /^(Physical CPU|\+-|\| |$)/)
        return "pcpus"
    return "row"
}

# the words of l into tok[1..n] and the column each ends at into end[1..n]; n
function words(l, tok, end,    i, n, c, inside) {
    n = 0
    inside = 0
    for (i = 1; i <= length(l); i++) {
        c = substr(l, i, 1)
        if (c == " ") {
            inside = 0
            continue
        }
        if (!inside) {
            n++
            tok[n] = ""
        }
        tok[n] = tok[n] c
        end[n] = i
        inside = 1
    }
    return n
}

function abs(x) {
    return x < 0 ? -x : x
}

function differ(what) {
    print "line " i ": " what
    print "  xentop:   " a[i]
    print "  xenstats: " b[i]
    bad = 1
}

# x and y as figures (a word's leading number: 123bytes is 123) within t
function near(x, y, t) {
    return abs((x + 0) - (y + 0)) <= t
}

NR == FNR {
    a[++na] = $0
    next
}
{
    b[++nb] = $0
}

END {
    bad = 0
    if (na != nb) {
        print "line counts differ: xentop " na ", xenstats " nb
        bad = 1
    }
    if (na == 0)
        bad = 1
    n = na < nb ? na : nb
    first = ""
    round = 0
    for (i = 1; i <= n; i++) {
        ka = kind(a[i])
        kb = kind(b[i])
        if (ka != kb) {
            differ("a " ka " line in xentop's, a " kb " line in ours")
            continue
        }
        if (ka == "header") {
            if (a[i] != b[i])
                differ("headers differ")
            split("", column)
            nh = words(a[i], htok, hend)
            for (k = 1; k <= nh; k++)
                column[hend[k]] = htok[k]
            continue
        }
        split("", ta)
        split("", tb)
        nta = words(a[i], ta, ea)
        ntb = words(b[i], tb, eb)
        if (nta != ntb) {
            differ(nta " fields in xentop's, " ntb " in ours")
            continue
        }
        for (k = 1; k <= nta; k++) {
            if (ea[k] != eb[k]) {
                differ("field " k " ends at column " ea[k] " in xentop's, " eb[k] " in ours")
                break
            }
        }
        if (k <= nta)
            continue
        if (ka == "row") {
            if (first == "")
                first = ta[1]
            if (ta[1] == first)
                round++
            for (k = 1; k <= nta; k++) {
                c = (ea[k] in column) ? column[ea[k]] : ""
                x = ta[k]
                y = tb[k]
                if (c == "STATE") {
                    # running and blocked flip from one instant to the next
                    gsub(/[rb]/, "-", x)
                    gsub(/[rb]/, "-", y)
                    if (x != y)
                        differ("STATE " ta[k] " vs " tb[k])
                } else if (c == "CPU(sec)") {
                    if (!near(x, y, tol))
                        differ("CPU(sec) " x " vs " y " (tolerance " tol ")")
                } else if (c == "CPU(%)") {
                    if (round == 1 && (x != "0.0" || y != "0.0"))
                        differ("CPU(%) of the first round: " x " vs " y ", not 0.0")
                    else if (!near(x, y, pct))
                        differ("CPU(%) " x " vs " y " (tolerance " pct ")")
                } else if (c == "NETTX(k)" || c == "NETRX(k)") {
                    if (!near(x, y, 2))
                        differ(c " " x " vs " y)
                } else if (c == "VBD_RD" || c == "VBD_WR") {
                    if (!near(x, y, 4))
                        differ(c " " x " vs " y)
                } else if (c == "VBD_RSECT" || c == "VBD_WSECT") {
                    if (!near(x, y, 64))
                        differ(c " " x " vs " y)
                } else if (x != y) {
                    differ((c == "" ? "field " k : c) " " x " vs " y)
                }
            }
            continue
        }
        # vCPU, network and disk lines: the same words once figures are set
        # aside; running seconds within tol, counts within a little traffic
        for (k = 1; k <= nta; k++) {
            x = ta[k]
            y = tb[k]
            sx = x
            sy = y
            gsub(/[0-9]+/, "#", sx)
            gsub(/[0-9]+/, "#", sy)
            if (sx != sy) {
                differ("word " k ": " x " vs " y)
                break
            }
            if (x !~ /^[0-9]/ || x == y)
                continue
            if (ka == "vcpus" || ka == "vcpus-more") {
                if (x ~ /s$/ && !near(x, y, tol))
                    differ("vCPU seconds " x " vs " y)
                else if (x !~ /s$/)
                    differ("word " k ": " x " vs " y)
            } else if (ka == "pcpus") {
                # a pCPU's use over slightly different intervals
                if (!near(x, y, pct))
                    differ("pCPU use " x " vs " y)
            } else if (!near(x, y, 4096 + (x + 0) / 10000)) {
                differ("figure " k ": " x " vs " y)
            }
        }
    }
    exit bad
}
