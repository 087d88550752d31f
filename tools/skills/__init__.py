"""Skills (Claude Code's format): found on disk (`catalog`), loaded by the model on demand
through the ``skill`` tool (`tool`)."""

from tools.skills.catalog import (
    Skill,
    SkillCatalog,
    SkillProblem,
    find_skills,
    read_skill,
    skill_dirs,
)
from tools.skills.tool import SkillTool

__all__ = [
    "Skill",
    "SkillCatalog",
    "SkillProblem",
    "SkillTool",
    "find_skills",
    "read_skill",
    "skill_dirs",
]
