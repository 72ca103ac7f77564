"""A textbook leaderboard for tests that need a well-identified IRT truth.

The simulator's defaults are calibrated to real leaderboards (guessing floors, items that
favour weaker models, a narrow spread of accuracies), which is what users should meet but
not what a test of parameter recovery needs: there the truth must be a plain 2PL model
(no floor) whose items all discriminate, with one specific skill per subtask.
"""

from mdad.data.simulate import SimulationParams

TEXTBOOK_2PL = SimulationParams(
    discrimination_median=1.2,
    discrimination_log_sd=0.35,
    negative_share=0.0,
    specific_ratio=0.7,
    subtask_share=0.9,
    difficulty_sd=1.3,
    floors=(0.0,),
    above_floor=(0.55, 0.4, 0.65, 0.5),
)
