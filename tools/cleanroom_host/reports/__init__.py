"""Reports: the summary and report.txt frame (frame), what every report shares (context, cells, plotkit,
paper, derive, clocks), compare (compare, comparesets, compareplots), and one module per benchmark family
(workset, locks, aspace, smp, smplocks) registered in families. Imports records, stats and machines."""
