"""``richlazy reproduce PAPER:FIGURE``: the main-text figures and tables of the four papers, each
with the validation case(s) that draw it and the status of that reproduction
(:mod:`._catalogue`, data only), and the command that runs those cases through the validation
runner and exports the figure and the numbers behind it (:mod:`._run`)."""
