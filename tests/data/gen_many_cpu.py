#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# gen_many_cpu.py: writes interrupts_many.txt and softirqs_many.txt, the
# synthetic many-CPU captures tests/test_irq_parse.c reads: 128 online CPUs
# numbered 0-39, 56-143 (16 offline in between), in the kernel's layout
# (kernel/irq/proc.c, arch/x86/kernel/irq.c, kernel/softirq.c). The counts
# follow a rule the test recomputes: row r, CPU c counts r * 1000 + c.
# Run it again only if the test's rule changes.
cpus = list(range(0, 40)) + list(range(56, 144))
assert len(cpus) == 128


def counts(r):
    return "".join("%10u " % (r * 1000 + c) for c in cpus)


def header(indent):
    return " " * indent + "".join("CPU%-8d" % c for c in cpus) + "\n"


rows = [
    ("0", "IO-APIC   2-edge      timer"),
    ("8", "IO-APIC   8-edge      rtc0"),
    ("9", "IO-APIC   9-fasteoi   acpi"),
    ("120", "IR-PCI-MSI 1572864-edge      PCIe PME, pciehp"),
    ("121", "PCI-MSIX-0000:3b:00.0   0-edge      mlx5_async0@pci:0000:3b:00.0"),
    ("122", "PCI-MSIX-0000:3b:00.0   1-edge      mlx5_comp0@pci:0000:3b:00.0"),
    ("123", "PCI-MSIX-0000:3b:00.0   2-edge      mlx5_comp1@pci:0000:3b:00.0"),
    ("124", "IR-PCI-MSI 3670016-edge      i40e-0000:5e:00.0:misc"),
    ("125", "IR-PCI-MSI 3670017-edge      i40e-ens1f0-TxRx-0"),
    ("126", "IR-PCI-MSI 3670018-edge      i40e-ens1f0-TxRx-1"),
    ("127", "IR-PCI-MSI 3670019-edge      ens1f01-TxRx-0"),
]
named = [("NMI", "Non-maskable interrupts"), ("LOC", "Local timer interrupts"),
         ("RES", "Rescheduling interrupts"), ("CAL", "Function call interrupts")]
with open("interrupts_many.txt", "w") as f:
    f.write(header(11))
    r = 0
    for name, text in rows:
        f.write("%4s: %s %s\n" % (name, counts(r), text))
        r += 1
    for name, text in named:
        f.write("%4s: %s  %s\n" % (name, counts(r), text))
        r += 1
    f.write(" ERR:          7\n MIS:          3\n")
soft = ["HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET",
        "SCHED", "HRTIMER", "RCU"]
with open("softirqs_many.txt", "w") as f:
    f.write(header(20).rstrip(" \n") + "\n")
    for r, name in enumerate(soft):
        f.write("%12s:%s\n" % (name, "".join(" %10u" % (r * 1000 + c) for c in cpus)))
