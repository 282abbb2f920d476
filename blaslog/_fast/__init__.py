"""The speed layer: everything blaslog does only to be fast, behind one narrow interface.

The parser (``blaslog/parse/``) reads one input line by line and is correct without any of this. It asks the
speed layer two things, and is never called back:

* a plan for a batch of lines (:func:`blaslog._fast.plan.plan`, or :func:`~blaslog._fast.plan.every_line` for a
  batch whose shapes are not known): which lines are whole records of a shape seen before (counted, or marked
  to be made from their template) and which the parser must assemble itself;
* the known record of a line shape (:func:`blaslog._fast.known.known_record`, and
  :func:`~blaslog._fast.known.marked_record` for a line the plan marked): the record, built or not yet, or word
  that the shape is not known, and the parser reads the text (through :meth:`ShapeCache.parse
  <blaslog._fast.cache.ShapeCache.parse>`, which runs the grammar and learns the shape).

After reading a record whole the parser tells the cache what it read (``ShapeCache.learn``, ``learn_record``);
nothing here calls into the parser. The records of a lazy read are all of one type, :class:`Records
<blaslog._fast.lazy.Records>`, whichever way they were made.

Rooms:

* ``_c``: the one switch between the C extension (``blaslog/_speedups.c``) and pure Python, and the switch
  of the shape cache (BLASLOG_PURE_PYTHON, BLASLOG_SHAPE_CACHE);
* ``shapes``: SHAPE and VOLATILE masks; the SHAPE keys of whole batches of lines;
* ``templates``: a record rebuilt from its shape's template (slots, Template, LineTemplate bound to a SHAPE key,
  and its form for lines behind other text that holds values);
* ``making``: a shape's template made from its tree (a dialect's build step run with slots for its values);
* ``lazy``: Records, what a lazy read yields (Built, ShapedCall, ShapedRun: records not built yet);
* ``cache``: what was learnt about shapes, shared by the inputs of one read (:class:`SharedShapes`) and by
  the pieces a worker process reads;
* ``saved``: the templates, the keys that begin records, and the records of texts no template serves, learnt
  by earlier processes, kept in the user's cache folder (BLASLOG_SAVED_SHAPES): a log read again runs no
  grammar (but for text the grammar rejects), and its process does not import lark (``blaslog/_lark.py``);
* ``plan``: the classifying pass over a batch (the first ask);
* ``known``: the record of a known shape (the second ask);
* ``follow``: records of several lines taken in one step by their lines' keys.

Everything here is guarded by deterministic counts (``CacheStats``) and by differential tests (C against
Python, cache on against off, shapes shared against learnt per input), so the pipeline reads the same with
it switched off.
"""
