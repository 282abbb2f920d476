"""The speed layer: everything blaslog does only to be fast, behind one narrow interface.

The parser (``blaslog/parse.py``) reads one input line by line and is correct without any of this. It asks the
speed layer two things, and is never called back:

* a plan for a batch of lines (:func:`blaslog._fast.plan.classify`): which lines are whole records of a
  shape seen before (counted, or built from their template) and which the parser must assemble itself;
* the known record of a line shape (:class:`blaslog._fast.cache.ShapeCache`: look up a template, parse
  through it, learn from what the grammar read).

Rooms:

* ``_c``: the one switch between the C extension (``blaslog/_speedups.c``) and pure Python, and the switch
  of the shape cache (BLASLOG_PURE_PYTHON, BLASLOG_SHAPE_CACHE);
* ``shapes``: SHAPE and VOLATILE masks; the SHAPE keys of whole batches of lines;
* ``templates``: a record rebuilt from its shape's template (slots, LineTemplate, and ShapedCall/ShapedRun,
  records not built yet, which only this layer and its writers see);
* ``cache``: what was learnt about shapes, shared by the inputs of one read (:class:`SharedShapes`) and by
  the pieces a worker process reads;
* ``plan``: the classifying pass over a batch.

Everything here is guarded by deterministic counts (``CacheStats``) and by differential tests (C against
Python, cache on against off, shapes shared against learnt per input), so the pipeline reads the same with
it switched off.
"""
