"""Generate the PDF files of the kbx demo corpus.

Run from anywhere:  python examples/make_pdfs.py   (needs fpdf2)

Only the core Helvetica font is used, so all text is latin-1 and extractable.
One page of reports/annual-review-2021.pdf is deliberately drawing-only (no
text), to exercise kbx's handling of unreadable pages.
"""

from datetime import datetime, timezone
from pathlib import Path

from fpdf import FPDF

HERE = Path(__file__).resolve().parent


def new_pdf(title, author, created):
    pdf = FPDF(format="A4")
    pdf.set_title(title)
    pdf.set_author(author)
    pdf.set_creator("examples/make_pdfs.py (fpdf2)")
    pdf.set_creation_date(created)
    pdf.set_margins(20, 20, 20)
    pdf.set_auto_page_break(True, margin=20)
    return pdf


def heading(pdf, text, size=14):
    pdf.set_font("Helvetica", "B", size)
    pdf.multi_cell(0, size * 0.6, text, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(2)


def para(pdf, text):
    pdf.set_font("Helvetica", "", 11)
    pdf.multi_cell(0, 5.5, " ".join(text.split()), new_x="LMARGIN", new_y="NEXT")
    pdf.ln(3)


def bullets(pdf, items):
    pdf.set_font("Helvetica", "", 11)
    for item in items:
        pdf.multi_cell(0, 5.5, "-  " + " ".join(item.split()), new_x="LMARGIN", new_y="NEXT")
    pdf.ln(3)


def table(pdf, rows):
    pdf.set_font("Helvetica", "", 10)
    with pdf.table(line_height=6) as t:
        for row in rows:
            t.row(row)
    pdf.ln(4)


def title_block(pdf, title, byline):
    pdf.add_page()
    heading(pdf, title, size=18)
    pdf.set_font("Helvetica", "I", 11)
    pdf.multi_cell(0, 6, byline, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(6)


def save(pdf, rel):
    out = HERE / rel
    out.parent.mkdir(parents=True, exist_ok=True)
    pdf.output(str(out))
    print(f"wrote {rel} ({out.stat().st_size} bytes, {pdf.pages_count} pages)")


# --------------------------------------------------------------------------
# 1. Cedar supplier risk model (3 pages)
# --------------------------------------------------------------------------
def cedar_risk_model():
    pdf = new_pdf("Project Cedar: Supplier Risk Model", "Maya Okafor; Ravi Menon",
                  datetime(2021, 9, 20, 10, 0, tzinfo=timezone.utc))
    title_block(pdf, "Project Cedar: Supplier Risk Model",
                "Maya Okafor and Ravi Menon - Halden Research Group - 20 September 2021")
    heading(pdf, "1. Purpose")
    para(pdf, """This paper describes how Cedar reviewers assign a risk tier (A, B or C)
        to a new supplier. It was requested by Dr. Helen Marsh at the steering meeting
        of 15 June 2021 and is written for the board meeting in Q3 2021. It complements
        the process page on the wiki, which explains what reviewers check; this paper
        explains how the checks add up to a tier.""")
    heading(pdf, "2. Risk factors")
    para(pdf, """Each factor is scored 0 (no concern), 1 (some concern) or 2 (serious
        concern). The scores are not added blindly: any single factor scored 2 puts the
        supplier in tier A regardless of the total.""")
    table(pdf, [
        ("Factor", "Score 0", "Score 1", "Score 2"),
        ("Spend per year", "under $5,000", "$5,000 - $25,000", "over $25,000"),
        ("Data access", "none", "metadata only", "research or finance data"),
        ("Network access", "none", "local only", "outbound internet"),
        ("Hazard / cold chain", "none", "ambient, controlled", "cold chain or hazardous"),
        ("Substitutability", "many sources", "two or three", "single source"),
    ])
    para(pdf, """A total of 0 to 2 gives tier C, 3 to 5 gives tier B, and 6 or more gives
        tier A. For example, a solvent supplier with annual spend of about $8,000,
        no data or network access, ambient storage and many alternatives scores 1
        and is tier C.""")
    pdf.add_page()
    heading(pdf, "3. Results since May 2021")
    para(pdf, """Between 3 May and 31 August 2021 reviewers assigned 91 tiers. We re-scored
        a random sample of 20 of them independently: the two scorers agreed on 18,
        and both disagreements were between tiers B and C. The median review time
        was 2 days for tier C, 8 days for tier B and 24 days for tier A.""")
    table(pdf, [
        ("Tier", "Suppliers", "Share", "Median review (days)", "Reviewer hours"),
        ("A", "9", "10%", "24", "11.5"),
        ("B", "30", "33%", "8", "4.0"),
        ("C", "52", "57%", "2", "0.75"),
    ])
    para(pdf, """Reviewer time totalled about 265 hours over four months, or roughly
        0.4 of a full-time post. At our internal cost rate that is about $9,800,
        against an estimated $1,200 of direct loss and six weeks of lost lab time
        in the single Q3 2019 cold-chain incident that started the project.""")
    heading(pdf, "4. Known weaknesses")
    bullets(pdf, [
        """Network access is scored on what the supplier tells us. Instruments that
            expose local services are scored 1 even when those services are poorly
            protected.""",
        """Substitutability is judged by the requester, who often does not know the
            market well.""",
        """The model has no factor for the supplier's own security practices; those
            are handled separately by the security questionnaire.""",
    ])
    pdf.add_page()
    heading(pdf, "5. Proposals")
    para(pdf, """We propose keeping the model unchanged until March 2022, then reviewing
        it with a full year of data. Two small changes are proposed now: reviewers
        should record the score for each factor, not only the tier, and any instrument
        with a network interface should be checked by Priya Raman even if it scores
        as tier B. The second change is cheap and addresses the first weakness above.""")
    para(pdf, """Approved by the board on 28 September 2021. Next review: March 2022.""")
    save(pdf, "papers/cedar-risk-model.pdf")


# --------------------------------------------------------------------------
# 2. seL4 benchmark report (2 pages)
# --------------------------------------------------------------------------
def sel4_benchmark_report():
    pdf = new_pdf("seL4 Prototype Benchmark Report", "Jonas Weber",
                  datetime(2022, 10, 21, 16, 30, tzinfo=timezone.utc))
    title_block(pdf, "seL4 Prototype Benchmark Report",
                "Jonas Weber (ORCID 0000-0002-1825-0097) - 21 October 2022 - internal")
    heading(pdf, "Summary")
    para(pdf, """This report gives the raw benchmark data behind the seL4 evaluation note.
        All runs used the evaluation board at 1.2 GHz with 512 MB of RAM, between
        22 August and 30 September 2022. The kernel is the one described by Klein et
        al. in "seL4: Formal Verification of an OS Kernel", SOSP 2009,
        doi:10.1145/1629575.1629596, in a current release.""")
    heading(pdf, "Control loop jitter")
    para(pdf, """Jitter is the deviation of each control cycle's start time from the 1 kHz
        schedule. Each row is 10,000 cycles. The requirement is below 50 microseconds
        at the 99.9th percentile.""")
    table(pdf, [
        ("Configuration", "Load", "p50 (us)", "p99 (us)", "p99.9 (us)"),
        ("seL4 prototype", "idle", "0.8", "2.1", "3.0"),
        ("seL4 prototype", "vendor load", "1.1", "4.6", "7.0"),
        ("Linux 5.15 PREEMPT_RT", "idle", "2.5", "11", "18"),
        ("Linux 5.15 PREEMPT_RT", "vendor load", "9.0", "120", "250"),
    ])
    heading(pdf, "IPC and memory")
    para(pdf, """Same-core IPC round trip between the control loop and the gateway took
        0.4 microseconds (median of 10,000 calls). The three protection domains and
        the kernel together use 21 MB, leaving about 235 MB of the 256 MB budget for
        sample buffers. A full sample buffer dump of 3.5 MB reaches the gateway in
        under 250 ms over the shared region.""")
    pdf.add_page()
    heading(pdf, "Method notes")
    bullets(pdf, [
        "Cycle counter read at the start of every control cycle; no tracing in the hot path.",
        "Vendor load: 3.5 MB bursts to the shared buffer plus a tight system call loop.",
        "Each configuration was rebooted between runs; the first 100 cycles were discarded.",
        "Raw data (about 1.2 GB of traces) is on the analysis cluster under /home/jweber/sel4-bench.",
    ])
    heading(pdf, "Open questions")
    para(pdf, """We have not yet measured behaviour during a 72-hour soak test, and we have
        only one board model. The next-generation board is expected in Q2 2023. Tomas
        Lindqvist will repeat the jitter runs on it two weeks after it arrives.""")
    save(pdf, "papers/sel4-benchmark-report.pdf")


# --------------------------------------------------------------------------
# 3. Annual review 2021 (4 pages, page 3 is a drawing with no text)
# --------------------------------------------------------------------------
def annual_review_2021():
    pdf = new_pdf("Halden Research Group: Annual Review 2021", "Helen Marsh",
                  datetime(2022, 1, 31, 9, 0, tzinfo=timezone.utc))
    title_block(pdf, "Annual Review 2021",
                "Dr. Helen Marsh, Director - Halden Research Group - 31 January 2022")
    heading(pdf, "A year of process")
    para(pdf, """If 2020 was the year we kept the lab running through disruption, 2021 was
        the year we wrote down how we work. The largest single change was Project
        Cedar, the supplier approval process launched on 4 March 2021 and mandatory
        since May 2021. It was followed by the lab's new receiving and storage
        procedure, and by the move of every incident review to a blameless postmortem
        format with published action items.""")
    para(pdf, """We grew from 34 to 41 people. Dr. Grace Liu joined in March 2021 to lead
        machine learning work, and the analysis cluster grew by eight GPUs. Total
        operating spend was $3.1 million, 4% under budget.""")
    heading(pdf, "Highlights by quarter")
    table(pdf, [
        ("Quarter", "Highlight"),
        ("Q1 2021", "Cedar kickoff (4 March); purchase audit of 214 orders"),
        ("Q2 2021", "Cedar mandatory from 3 May; exit criterion added in June"),
        ("Q3 2021", "Risk model approved by the board (28 September)"),
        ("Q4 2021", "Log4Shell (CVE-2021-44228) response in December"),
    ])
    pdf.add_page()
    heading(pdf, "Research")
    para(pdf, """The reading group met 38 times. Publications by group members appeared
        in venues including Nature (ISSN 1476-4687 online) and Communications of the
        ACM (ISSN 0001-0782), and two preprints were posted to arXiv. Jonas Weber began
        scoping the instrument controller project, which will evaluate the seL4
        microkernel in 2022.""")
    heading(pdf, "Operations")
    para(pdf, """There were 14 incidents: 1 SEV1, 5 SEV2 and 8 SEV3. Median time to
        resolve a SEV2 fell from 3.2 hours in 2020 to 1.9 hours. The figure on the next
        page shows incidents per quarter; it is reproduced as a drawing from the
        operations dashboard.""")
    # Page 3: drawing only, deliberately no text at all.
    pdf.add_page()
    pdf.set_draw_color(40, 40, 40)
    pdf.set_line_width(0.6)
    pdf.rect(30, 40, 150, 110)                      # chart frame
    pdf.set_fill_color(70, 110, 170)
    for i, height in enumerate([30, 45, 20, 55]):   # incidents per quarter (bars)
        pdf.rect(45 + i * 35, 150 - height * 1.6, 20, height * 1.6, style="F")
    pdf.set_fill_color(220, 220, 220)
    pdf.rect(30, 170, 150, 60, style="DF")          # a blank "photo" placeholder
    pdf.line(30, 170, 180, 230)
    pdf.line(30, 230, 180, 170)
    pdf.add_page()
    heading(pdf, "Looking ahead to 2022")
    bullets(pdf, [
        "Review the Cedar risk model with a full year of data (March 2022).",
        "Evaluate seL4 for the next controller generation (from July 2022).",
        "Move all internal TLS traffic to TLS 1.3 (RFC 8446) by Q4 2022.",
        "Keep growth modest: no more than 5 new posts.",
    ])
    para(pdf, """Thank you all for a year of careful, unglamorous work that makes the
        interesting work possible.""")
    save(pdf, "reports/annual-review-2021.pdf")


if __name__ == "__main__":
    cedar_risk_model()
    sel4_benchmark_report()
    annual_review_2021()
